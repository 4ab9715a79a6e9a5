package httpapi_test

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/store"
)

// ipLike finds what could be an IP address in a message: dotted quads, and IPv6 forms (at
// least two colons among hex digits, such as ::1 or fd00::5).
var ipLike = regexp.MustCompile(`\b\d{1,3}(?:\.\d{1,3}){3}\b|[0-9A-Fa-f]*:[0-9A-Fa-f]*:[0-9A-Fa-f:.]*`)

// leakedAddresses lists the IP addresses in msg that the user did not type in typed.
func leakedAddresses(msg, typed string) []string {
	var out []string
	for _, m := range ipLike.FindAllString(msg, -1) {
		a, err := netip.ParseAddr(strings.Trim(m, "[]:"))
		if err != nil && !strings.Contains(m, ".") {
			// "::" alone, or a time of day: only parsable addresses count.
			if a, err = netip.ParseAddr(m); err != nil {
				continue
			}
		}
		if err != nil {
			continue
		}
		if !strings.Contains(typed, a.String()) {
			out = append(out, m)
		}
	}
	return out
}

// privateName is a host name that resolves only to private or loopback addresses, the
// machine's own name where it does (as in most containers); "" when there is none.
func privateName(t *testing.T) string {
	name, err := os.Hostname()
	if err != nil || name == "" || name == "localhost" {
		return ""
	}
	addrs, err := net.DefaultResolver.LookupNetIP(t.Context(), "ip", name)
	if err != nil || len(addrs) == 0 {
		return ""
	}
	for _, a := range addrs {
		if a = a.Unmap(); !(a.IsLoopback() || a.IsPrivate()) {
			return ""
		}
	}
	return name
}

// closedPort is a loopback port nothing listens on.
func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()
	return port
}

// surface is one place where reelay connects to a host a user named and tells the user what
// came of it: it makes the request with url and answers the message the user gets.
type surface struct {
	name string
	tell func(t *testing.T, e *env, url string) string
	// resolveOnly: the surface resolves the host without connecting (a webhook's URL is
	// checked at registration, and first connected to on delivery).
	resolveOnly bool
}

func answerMessage(t *testing.T, r *resp) string {
	t.Helper()
	if r.Code < 400 {
		t.Fatalf("answer %d, want a refusal: %s", r.Code, r.Body)
	}
	return string(r.Body)
}

var answeredSurfaces = []surface{
	{"publish video_url", func(t *testing.T, e *env, url string) string {
		return answerMessage(t, e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key,
			Body: map[string]any{"project_id": e.a.ProjectID, "video_url": url}}))
	}, false},
	{"publish dry run thumbnail_url", func(t *testing.T, e *env, url string) string {
		return answerMessage(t, e.do(req{Method: "POST", Path: "/api/v1/publish?dry_run=true", Key: e.a.Key,
			Body: map[string]any{"project_id": e.a.ProjectID, "video_url": url, "thumbnail_url": url}}))
	}, false},
	{"AI image", func(t *testing.T, e *env, url string) string {
		return answerMessage(t, e.do(req{Method: "POST", Path: "/api/v1/ai/generate-video", Key: e.a.Key,
			Body: map[string]any{"prompt": "sunrise", "imageUrl": url}}))
	}, false},
	{"webhook registration", func(t *testing.T, e *env, url string) string {
		return answerMessage(t, e.do(req{Method: "POST", Path: "/api/v1/webhooks", Key: e.a.Key,
			Body: map[string]any{"url": url, "events": []string{"post.published"}}}))
	}, true},
	{"Mastodon channel", func(t *testing.T, e *env, url string) string {
		return answerMessage(t, e.do(req{Method: "POST", Path: "/api/v1/channels", Key: e.a.Key,
			Body: map[string]any{"project_id": e.a.ProjectID, "platform": "mastodon",
				"credentials": map[string]string{"instance_url": url, "access_token": "token"}}}))
	}, false},
	{"Bluesky channel on its own PDS", func(t *testing.T, e *env, url string) string {
		return answerMessage(t, e.do(req{Method: "POST", Path: "/api/v1/channels", Key: e.a.Key,
			Body: map[string]any{"project_id": e.a.ProjectID, "platform": "bluesky",
				"credentials": map[string]string{"handle": "alice.example.com", "app_password": "abcd-efgh-ijkl-mnop", "pds_url": url}}}))
	}, false},
}

// Refusals and connection failures at hosts users name tell the user what went wrong without
// the addresses those hosts resolve to inside reelay's network: a host the guard refuses is
// named as the user gave it, with the setting that would open it (REELAY_ALLOW_HOSTS); a
// host on the operator's list that cannot be reached is "could not connect", without the
// address and port dialled. Each surface is tried with loopback and private hosts under the
// guard, and with a closed port on a host the operator allowed.
func TestMessagesDoNotRevealInternalAddresses(t *testing.T) {
	// A video model is configured (never called: the picture is refused first) so that an
	// image to animate is taken in without ffmpeg on the machine.
	model := func(c *config.Config) { c.VideoURL = "https://video-model.invalid/text-to-video" }
	guarded := newAppEnv(t, store.SQLite, func(c *config.Config) { c.AllowPrivateURLs = false }, waitForAI, model)
	allowed := newAppEnv(t, store.SQLite, func(c *config.Config) { c.AllowPrivateURLs, c.AllowHosts = false, "localhost" }, waitForAI, model)
	for _, e := range []*env{guarded, allowed} {
		e.grant(e.a, 10)
		e.defaultChannels(e.a)
	}
	refused := []string{"http://localhost:9/v.mp4", "http://127.0.0.1:9/v.mp4", "http://[::1]:9/v.mp4"}
	if name := privateName(t); name != "" {
		refused = append(refused, "http://"+name+":9/v.mp4")
	}
	closed := "http://localhost:" + closedPort(t) + "/v.mp4"

	for _, s := range answeredSurfaces {
		for _, url := range refused {
			t.Run(s.name+"/refused "+url, func(t *testing.T) {
				msg := s.tell(t, guarded, url)
				t.Log(msg)
				if leaks := leakedAddresses(msg, url); len(leaks) > 0 {
					t.Errorf("the answer reveals %v: %s", leaks, msg)
				}
				if !strings.Contains(msg, "REELAY_ALLOW_HOSTS") {
					t.Errorf("the refusal does not name REELAY_ALLOW_HOSTS: %s", msg)
				}
			})
		}
		if s.resolveOnly {
			continue
		}
		t.Run(s.name+"/closed port "+closed, func(t *testing.T) {
			msg := s.tell(t, allowed, closed)
			t.Log(msg)
			if leaks := leakedAddresses(msg, closed); len(leaks) > 0 {
				t.Errorf("the answer reveals %v: %s", leaks, msg)
			}
			if strings.Contains(msg, "dial tcp") {
				t.Errorf("the answer passes on the dialler's own words: %s", msg)
			}
		})
	}

	// What is recorded for later: a webhook delivery's error, a destination's message.
	t.Run("webhook delivery record/closed port "+closed, func(t *testing.T) {
		e := allowed
		id, _ := e.webhook(e.a, strings.TrimSuffix(closed, "/v.mp4")+"/hook", "post.published")
		e.publishTo(e.a, []string{"youtube"}, nil)
		d := e.waitDelivery(e.a, id, 20*time.Second, func(d map[string]any) bool { return d["last_error"] != nil })
		msg, _ := json.Marshal(d)
		if leaks := leakedAddresses(string(msg), closed); len(leaks) > 0 {
			t.Errorf("the delivery record reveals %v: %s", leaks, msg)
		}
		if strings.Contains(string(msg), "dial tcp") {
			t.Errorf("the delivery record passes on the dialler's own words: %s", msg)
		}
	})
	t.Run("post destination message/instance gone", func(t *testing.T) {
		e := allowed
		// A Mastodon instance on the operator's network that answers while the channel is
		// connected, and is gone when the post goes out.
		instance := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"id":"1","username":"alice","acct":"alice","display_name":"Alice"}`))
		}))
		_, port, _ := net.SplitHostPort(strings.TrimPrefix(instance.URL, "http://"))
		instanceURL := "http://localhost:" + port
		r := e.do(req{Method: "POST", Path: "/api/v1/channels", Key: e.a.Key, Body: map[string]any{
			"project_id": e.a.ProjectID, "platform": "mastodon",
			"credentials": map[string]string{"instance_url": instanceURL, "access_token": "token"}}})
		if r.Code != http.StatusCreated {
			t.Fatalf("connect the instance: %d %s", r.Code, r.Body)
		}
		instance.Close()
		ms := newMediaServer(t, map[string][]byte{"/clip.mp4": video(t, 5)})
		r = e.do(req{Method: "POST", Path: "/api/v1/publish", Key: e.a.Key, Header: map[string]string{"Prefer": "wait=0"},
			Body: map[string]any{"project_id": e.a.ProjectID, "video_url": ms.URL + "/clip.mp4", "platforms": []string{"mastodon"}, "caption": "gone"}})
		if r.Code != http.StatusAccepted {
			t.Fatalf("publish: %d %s", r.Code, r.Body)
		}
		p := e.waitPost(e.a, r.JSON["post_id"].(string), 30*time.Second, statusIs("failed"))
		msg, _ := json.Marshal(p["publish_results"])
		if leaks := leakedAddresses(string(msg), instanceURL); len(leaks) > 0 {
			t.Errorf("the destination reveals %v: %s", leaks, msg)
		}
		if strings.Contains(string(msg), "dial tcp") {
			t.Errorf("the destination passes on the dialler's own words: %s", msg)
		}
	})
}
