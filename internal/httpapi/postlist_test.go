package httpapi_test

import (
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/app/apptest"
)

// storedPost stores a post of the tenant (apptest.StoredPost) and answers its id.
func (e *env) storedPost(tn tenant, title string, created time.Time, scheduled *time.Time, platforms ...string) string {
	return apptest.StoredPost(e.t, e.st, tn, title, created, scheduled, platforms...)
}

// TestListPostsFilters: GET /posts by platform and by created or scheduled time, with paging
// that keeps the filters, and never another account's posts.
func TestListPostsFilters(t *testing.T) {
	each(t, func(t *testing.T, e *env) {
		day := func(d, h int) time.Time { return time.Date(2027, 3, d, h, 0, 0, 0, time.UTC) }
		at := func(d, h int) *time.Time { t := day(d, h); return &t }
		e.storedPost(e.a, "now-yt", day(1, 9), nil, "youtube")
		e.storedPost(e.a, "sched-tt", day(2, 9), at(10, 12), "tiktok")
		e.storedPost(e.a, "sched-both", day(3, 9), at(20, 8), "youtube", "tiktok")
		e.storedPost(e.a, "late-tt", day(4, 23), at(11, 0), "tiktok")
		// Bob's posts match every filter below.
		e.storedPost(e.b, "bob-tt", day(2, 10), at(10, 13), "tiktok")
		e.storedPost(e.b, "bob-yt", day(3, 10), nil, "youtube")

		list := func(key string, q url.Values) ([]string, string) {
			t.Helper()
			r := e.do(req{Method: "GET", Path: "/api/v1/posts?" + q.Encode(), Key: key})
			if r.Code != http.StatusOK {
				t.Fatalf("list %s: %d %s", q.Encode(), r.Code, r.Body)
			}
			var titles []string
			for _, p := range r.JSON["posts"].([]any) {
				titles = append(titles, p.(map[string]any)["title"].(string))
			}
			next, _ := r.JSON["next_cursor"].(string)
			return titles, next
		}
		for _, tc := range []struct {
			name  string
			query url.Values
			want  []string
		}{
			{"platform", url.Values{"platform": {"tiktok"}}, []string{"late-tt", "sched-both", "sched-tt"}},
			{"platform all", url.Values{"platform": {"all"}}, []string{"late-tt", "sched-both", "sched-tt", "now-yt"}},
			// 3 March in Paris (UTC+1): from 2 March 23:00 UTC to 3 March 23:00 UTC.
			{"created on a day in a timezone", url.Values{"created_since": {"2027-03-03T00:00:00+01:00"}, "created_before": {"2027-03-04T00:00:00+01:00"}},
				[]string{"sched-both"}},
			{"created since a date (UTC)", url.Values{"created_since": {"2027-03-03"}}, []string{"late-tt", "sched-both"}},
			{"scheduled between", url.Values{"scheduled_since": {"2027-03-10T00:00:00Z"}, "scheduled_before": {"2027-03-12T00:00:00Z"}},
				[]string{"late-tt", "sched-tt"}},
			{"every filter", url.Values{"project_id": {e.a.ProjectID}, "status": {"scheduled"}, "platform": {"tiktok"},
				"created_since": {"2027-03-02"}, "created_before": {"2027-03-04"}, "scheduled_since": {"2027-03-01"}, "scheduled_before": {"2027-04-01"}},
				[]string{"sched-both", "sched-tt"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if got, _ := list(e.a.Key, tc.query); !slices.Equal(got, tc.want) {
					t.Errorf("got %v, want %v", got, tc.want)
				}
			})
		}
		// Bob, with the same filters, sees his own posts only.
		if got, _ := list(e.b.Key, url.Values{"platform": {"tiktok"}, "created_since": {"2027-03-01"}}); !slices.Equal(got, []string{"bob-tt"}) {
			t.Errorf("bob's tiktok posts: %v", got)
		}

		// Paging by one keeps to the filters.
		var walked []string
		q := url.Values{"platform": {"tiktok"}, "scheduled_since": {"2027-03-01"}, "limit": {"1"}}
		for range 5 {
			page, next := list(e.a.Key, q)
			walked = append(walked, page...)
			if next == "" {
				break
			}
			q.Set("cursor", next)
		}
		if want := []string{"late-tt", "sched-both", "sched-tt"}; !slices.Equal(walked, want) {
			t.Errorf("paged: %v, want %v", walked, want)
		}

		for _, tc := range []struct {
			name, query, field string
			code               int
		}{
			{"unknown platform", "platform=myspace", "platform", 400},
			{"not a time", "created_since=yesterday", "created_since", 400},
			{"a time without an offset", "scheduled_before=2027-03-01T10:00:00", "scheduled_before", 400},
			{"an empty range", "created_since=2027-03-02&created_before=2027-03-02", "created_before", 400},
			{"a range the wrong way round", "scheduled_since=2027-03-05&scheduled_before=2027-03-01", "scheduled_before", 400},
			{"another account's project", "project_id=" + e.b.ProjectID + "&platform=tiktok", "", 404},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := e.do(req{Method: "GET", Path: "/api/v1/posts?" + tc.query, Key: e.a.Key})
				if r.Code != tc.code || (tc.field != "" && r.field(tc.field) == "") {
					t.Errorf("%d %s; want %d naming %q", r.Code, r.Body, tc.code, tc.field)
				}
			})
		}
	})
}
