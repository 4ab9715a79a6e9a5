package cli

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/reelay/reelay/internal/config"
)

var metricsURLPattern = regexp.MustCompile(`url=(http://\S+/metrics)`)

// TestServeMetricsAccess: every role serves /metrics as REELAY_METRICS_ADDR and
// REELAY_METRICS_TOKEN say: not at all without either, behind the token on the main listener,
// or on a listener of its own (and then not on the main one). The token is never logged.
func TestServeMetricsAccess(t *testing.T) {
	t.Parallel()
	const token = "metrics-token-for-the-serve-test"
	type scrape struct {
		onOwnListener bool
		auth          string
		code          int
	}
	tests := []struct {
		name         string
		addr, token  string
		scrapes      []scrape
		logSays      string
		ownListenerN int
	}{
		{
			name:    "neither: not served",
			scrapes: []scrape{{auth: "", code: 404}, {auth: "Bearer " + token, code: 404}},
			logSays: "/metrics is not served",
		},
		{
			name:  "token: asked for on the main listener",
			token: token,
			scrapes: []scrape{
				{auth: "", code: 401},
				{auth: "Bearer not-the-metrics-token-at-all", code: 401},
				{auth: "Bearer " + token, code: 200},
			},
		},
		{
			name: "address: served there only",
			addr: "127.0.0.1:0",
			scrapes: []scrape{
				{auth: "", code: 404},
				{onOwnListener: true, auth: "", code: 200},
			},
			logSays: "serving metrics",
		},
		{
			name:  "address and token",
			addr:  "127.0.0.1:0",
			token: token,
			scrapes: []scrape{
				{auth: "Bearer " + token, code: 404},
				{onOwnListener: true, auth: "", code: 401},
				{onOwnListener: true, auth: "Bearer " + token, code: 200},
			},
			logSays: "serving metrics",
		},
	}
	for _, role := range []string{config.RoleAll, config.RoleAPI, config.RoleWorker} {
		for _, tt := range tests {
			t.Run(role+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				base, stderr := startServer(t, t.TempDir(), func(c *config.Config) {
					c.Role, c.MetricsAddr, c.MetricsToken = role, tt.addr, tt.token
				})
				logs := stderr.String()
				if !strings.Contains(logs, tt.logSays) {
					t.Errorf("the log does not say %q:\n%s", tt.logSays, logs)
				}
				var own string
				if tt.addr != "" {
					m := metricsURLPattern.FindStringSubmatch(logs)
					if m == nil {
						t.Fatalf("no metrics listener logged:\n%s", logs)
					}
					own = m[1]
				}
				for _, s := range tt.scrapes {
					url := base + "/metrics"
					if s.onOwnListener {
						url = own
					}
					code, body := scrapeMetrics(t, url, s.auth)
					if code != s.code {
						t.Errorf("GET %s (Authorization %q): %d %s, want %d", url, s.auth, code, body, s.code)
					}
					if code == 200 && !strings.Contains(body, "go_goroutines") {
						t.Errorf("GET %s: 200 without the process's metrics:\n%s", url, body)
					}
				}
				if strings.Contains(stderr.String(), token) {
					t.Errorf("the log carries the metrics token:\n%s", stderr.String())
				}
			})
		}
	}
}

func scrapeMetrics(t *testing.T, url, auth string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}
