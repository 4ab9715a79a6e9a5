package e2e

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/media/mediatest"
)

// alertMetric finds the metric names in docs/prometheus-rules.yml: reelay's own and those of
// the Go and process collectors reelay registers. `up` is Prometheus's, checked apart.
var alertMetric = regexp.MustCompile(`\b(?:reelay|process|go)_[a-z0-9_]+\b`)

// servedMetric is a sample line of the text exposition format: its metric name.
var servedMetric = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]`)

// TestAlertRulesNameServedMetrics checks that every metric docs/prometheus-rules.yml alerts on
// is one a fleet's /metrics serves: an API process and a worker that published a post and
// delivered a webhook (counters with labels appear only once counted).
func TestAlertRulesNameServedMetrics(t *testing.T) {
	needPostgres(t, "the fleet's metrics need PostgreSQL")
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "prometheus-rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	rules := string(raw)
	wanted := map[string]bool{}
	for _, name := range alertMetric.FindAllString(rules, -1) {
		wanted[name] = true
	}
	if len(wanted) < 5 {
		t.Fatalf("the rules name %d metrics: %v", len(wanted), wanted)
	}
	exprs := 0
	sc := bufio.NewScanner(strings.NewReader(rules))
	for sc.Scan() {
		if strings.HasPrefix(strings.TrimSpace(sc.Text()), "expr:") {
			exprs++
		}
	}
	if alerts := strings.Count(rules, "- alert:"); alerts == 0 || alerts != exprs {
		t.Fatalf("%d alerts and %d expressions", alerts, exprs)
	}

	var delivered atomic.Int32
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		delivered.Add(1)
	}))
	defer receiver.Close()

	addr := freeAddr(t)
	base := "http://" + addr
	f := newFleet(t, "e2e-alert-rules", map[string]string{"REELAY_PUBLIC_URL": base})
	api := f.serve("reelay serve --role api", addr, "api")
	workers, workerBases := f.workers(1)
	api.waitHealthy(base, 60*time.Second)
	workers[0].waitHealthy(workerBases[0], 60*time.Second)

	c := newClient(t, base, f.acct.APIKey)
	c.must(http.StatusCreated, "POST", "/api/v1/webhooks", map[string]any{"url": receiver.URL, "events": []string{"post.published"}})
	channels := c.sandboxChannels(f.acct.ProjectID, []string{"telegram"}, 0)
	ids, _ := json.Marshal([]string{channels["telegram"].ID})
	video := mediatest.MP4(t, mediatest.Options{Duration: 2 * time.Second, Width: 720, Height: 1280})
	id := c.publishForm(map[string]string{"project_id": f.acct.ProjectID, "channel_ids": string(ids), "caption": "metrics"}, video)
	checkPublished(t, c.waitSettled(id, 60*time.Second))
	for deadline := time.Now().Add(30 * time.Second); delivered.Load() == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the webhook was not delivered within 30 s")
		}
	}

	served := map[string]bool{}
	for _, b := range []string{base, workerBases[0]} {
		for _, line := range strings.Split(metricsGet(t, b+"/metrics"), "\n") {
			if m := servedMetric.FindStringSubmatch(line); m != nil {
				served[m[1]] = true
			}
		}
	}
	for name := range wanted {
		if !served[name] {
			t.Errorf("docs/prometheus-rules.yml alerts on %s, which no process's /metrics serves", name)
		}
	}
}
