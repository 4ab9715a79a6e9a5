package web_test

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/app/apptest"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// storedPost stores a post of tn (apptest.StoredPost).
func (e *env) storedPost(tn tenant, title string, created time.Time, scheduled *time.Time, platforms ...string) {
	apptest.StoredPost(e.t, e.st, tn, title, created, scheduled, platforms...)
}

// setZone makes the browser's timezone cookie say zone, as app.js does.
func (b *browser) setZone(zone string) {
	u, _ := url.Parse(b.e.url)
	b.c.Jar.SetCookies(u, []*http.Cookie{{Name: "reelay_tz", Value: url.QueryEscape(zone), Path: "/"}})
}

var postRow = regexp.MustCompile(`<td data-label="Post"><a href="/posts/[^"]+">([^<]+)</a>`)

// listed are the titles of a post list page, in order.
func listed(body string) []string {
	var out []string
	for _, m := range postRow.FindAllStringSubmatch(body, -1) {
		out = append(out, html.UnescapeString(m[1]))
	}
	return out
}

// TestPostsFilters: the post list by platform and by days of creation or scheduling in the
// user's timezone, paged with its filters, refusing bad ones beside their fields, and never
// showing another account's posts.
func TestPostsFilters(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, d)
			b := e.browser()
			b.signIn(e.a.Key)
			b.setZone("America/New_York") // UTC-5 in early March
			utc := func(day, hour int) time.Time { return time.Date(2027, 3, day, hour, 0, 0, 0, time.UTC) }
			at := func(day, hour int) *time.Time { t := utc(day, hour); return &t }
			// 3 March 22:00 in New York is 4 March 03:00 UTC.
			e.storedPost(e.a, "late on the 3rd", utc(4, 3), at(11, 15), "tiktok")
			e.storedPost(e.a, "both, the 3rd", utc(3, 15), at(20, 15), "youtube", "tiktok")
			e.storedPost(e.a, "youtube, the 2nd", utc(2, 15), nil, "youtube")
			// 10 March 23:30 in New York is 11 March 04:30 UTC.
			e.storedPost(e.a, "tiktok, the 1st", utc(1, 15), &[]time.Time{time.Date(2027, 3, 11, 4, 30, 0, 0, time.UTC)}[0], "tiktok")
			// Bob's posts match every filter.
			e.storedPost(e.b, "bob's tiktok", utc(3, 15), at(11, 4), "tiktok")
			e.storedPost(e.b, "bob's youtube", utc(2, 15), nil, "youtube")

			for _, tc := range []struct {
				name  string
				query string
				want  []string
			}{
				{"everything", "", []string{"late on the 3rd", "both, the 3rd", "youtube, the 2nd", "tiktok, the 1st"}},
				{"platform", "platform=tiktok", []string{"late on the 3rd", "both, the 3rd", "tiktok, the 1st"}},
				{"created on a day in the user's timezone", "dates=created&from=2027-03-03&to=2027-03-03",
					[]string{"late on the 3rd", "both, the 3rd"}},
				{"created from a day on", "from=2027-03-02", []string{"late on the 3rd", "both, the 3rd", "youtube, the 2nd"}},
				{"scheduled up to a day, in the user's timezone", "dates=scheduled&to=2027-03-10", []string{"tiktok, the 1st"}},
				{"scheduled between, with platform and status", "dates=scheduled&from=2027-03-10&to=2027-03-20&platform=tiktok&status=scheduled",
					[]string{"late on the 3rd", "both, the 3rd", "tiktok, the 1st"}},
				{"every project", "project=all&platform=youtube", []string{"both, the 3rd", "youtube, the 2nd"}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					r := b.get("/posts?" + tc.query)
					if r.Code != 200 {
						t.Fatalf("%d\n%s", r.Code, r.Body)
					}
					if got := listed(r.Body); !slices.Equal(got, tc.want) {
						t.Errorf("got %q, want %q", got, tc.want)
					}
					if strings.Contains(r.Body, "bob") {
						t.Error("another account's post is listed")
					}
				})
			}
			// The form shows the filters as sent, and the timezone the days are in.
			r := b.get("/posts?dates=scheduled&from=2027-03-10&to=2027-03-20&platform=tiktok")
			for _, want := range []string{`<option value="tiktok" selected>`, `<option value="scheduled" selected>`,
				`id="filter-from" name="from" type="date" value="2027-03-10"`, `value="2027-03-20"`, "America/New_York", "Clear filters"} {
				if !strings.Contains(r.Body, want) {
					t.Errorf("the filtered page lacks %s", want)
				}
			}
			if r := b.get("/posts?platform=reddit"); r.Code != 200 || !strings.Contains(r.Body, "No posts match these filters") {
				t.Errorf("no match: %d", r.Code)
			}

			// Refused filters: beside their fields, with nothing listed.
			for _, tc := range []struct{ query, field string }{
				{"from=2027-03-05&to=2027-03-01", "filter-to-error"},
				{"from=March", "filter-from-error"},
				{"platform=myspace", "filter-platform-error"},
				{"dates=published&from=2027-03-01", "filter-dates-error"},
				{"project=" + e.b.ProjectID, "filter-project-error"},
			} {
				r := b.get("/posts?" + tc.query)
				if r.Code != http.StatusBadRequest || !strings.Contains(r.Body, `id="`+tc.field+`"`) || !strings.Contains(r.Body, `aria-invalid="true"`) || len(listed(r.Body)) != 0 {
					t.Errorf("%s: %d, want 400 with %s\n%s", tc.query, r.Code, tc.field, r.Body)
				}
			}
		})
	}
}

// TestPostsFilterPaging: the next page's link keeps the filters, and the pages together list
// exactly the matching posts.
func TestPostsFilterPaging(t *testing.T) {
	t.Parallel()
	e := newEnv(t, store.SQLite)
	b := e.browser()
	b.signIn(e.a.Key)
	start := time.Date(2027, 5, 1, 12, 0, 0, 0, time.UTC)
	for i := range 45 {
		platform := "tiktok"
		if i%3 == 0 {
			platform = "youtube"
		}
		e.storedPost(e.a, fmt.Sprintf("%s %02d", platform, i), start.Add(time.Duration(i)*30*time.Minute), nil, platform)
	}
	e.storedPost(e.b, "bob's tiktok", start.Add(5*time.Hour), nil, "tiktok")
	first := b.get("/posts?platform=tiktok&from=2027-05-01&to=2027-05-02")
	m := regexp.MustCompile(`href="(/posts\?[^"]*cursor=[^"]+)" rel="next"`).FindStringSubmatch(first.Body)
	if m == nil {
		t.Fatalf("no link to the next page:\n%s", first.Body)
	}
	next := html.UnescapeString(m[1])
	for _, want := range []string{"platform=tiktok", "from=2027-05-01", "to=2027-05-02", "dates=created"} {
		if !strings.Contains(next, want) {
			t.Errorf("the next page's link %s lacks %s", next, want)
		}
	}
	second := b.get(next)
	all := append(listed(first.Body), listed(second.Body)...)
	var want []string
	for i := 44; i >= 0; i-- {
		if i%3 != 0 {
			want = append(want, fmt.Sprintf("tiktok %02d", i))
		}
	}
	if !slices.Equal(all, want) || strings.Contains(second.Body, `rel="next"`) || !strings.Contains(second.Body, "First page") {
		t.Errorf("pages: %q, want %q", all, want)
	}
}
