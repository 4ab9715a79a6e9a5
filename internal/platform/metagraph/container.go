package metagraph

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/reelay/reelay/internal/provider"
)

// The container flow is how Instagram and Threads publish a video they pull from a link:
// create a media container from the video's URL, poll its status until Meta has fetched
// and processed the video, publish it, then read the published item's link. One Step call
// makes one move, and the state it returns is stored before the next. The two platforms
// differ in their edges, fields, words and error codes only; those are Container's fields,
// and each provider's package comment tells its own platform's steps.
//
// Crash safety rests on Graph reporting PUBLISHED for a container whose publish call went
// through: the status is read before every publish, and a container found PUBLISHED has its
// item looked up among the owner's recent items (same text, made at or after the container)
// instead of being published again.

// ContainerState is what a container flow stores between steps (Destination.State /
// Outcome.State). It holds the platform's references only, never a token.
type ContainerState struct {
	// ContainerID is the media container created for the post.
	ContainerID string `json:"container_id,omitempty"`
	// CreatedAt is when the container was created (reelay's clock): it bounds the search for
	// the item of a container found PUBLISHED.
	CreatedAt time.Time `json:"created_at,omitzero"`
	// Polls counts the status reads that found the container not ready (the back-off).
	Polls int `json:"polls,omitempty"`
	// MediaID is the published item; once set, nothing is published again.
	MediaID string `json:"media_id,omitempty"`
	// Searches counts the lookups for the item of a container found PUBLISHED.
	Searches int `json:"searches,omitempty"`
	// Refetches counts the containers dropped because Meta could not download the video
	// (the media link was down, e.g. reelay restarting) and created anew.
	Refetches int `json:"refetches,omitempty"`
}

// Published is what the flow needs of a published item read from Graph.
type Published struct {
	ID, Text, Kind, Timestamp, Link string
}

// Media is a provider's decoding of one published item (its own field names).
type Media interface {
	Published() Published
}

// Container is the container flow of one platform; O is its publish options, M its decoding
// of a published item. Fields left zero are not defaulted here: the provider's New sets them.
type Container[O any, M Media] struct {
	// Platform names the platform at the head of every message ("Instagram").
	Platform string
	// BaseURL is the API root, overridden by a destination's BaseURL; HTTPClient makes the calls.
	BaseURL    string
	HTTPClient *http.Client
	// Now is the clock.
	Now func() time.Time
	// PollInitial is the first wait before reading a container's status; the waits grow from
	// it as provider.PollDelay says, up to PollMax.
	PollInitial, PollMax time.Duration
	// FindAttempts is how many times the item of a container found PUBLISHED is looked for.
	FindAttempts int
	// MaxRefetches bounds the new containers made after failed downloads.
	MaxRefetches int
	// SkipPublishingLimitCheck leaves out the quota read before a container is created.
	SkipPublishingLimitCheck bool
	// Repeat is how a call that failed transiently is made again within a Step.
	Repeat provider.Repeat
	// Classify turns a failed call into a *provider.Error (the platform's table).
	Classify func(error) *provider.Error
	// NotReady reports whether a failed publish is Graph's "the media is not ready".
	NotReady func(error) bool

	// NoAccount is the message for a channel without the platform's user id.
	NoAccount string
	// QuotaEdge, CreateEdge, PublishEdge and ListEdge are the edges of the account
	// (/{user-id}/…) that read the publishing limit, create a container, publish it and list
	// the recent items.
	QuotaEdge, CreateEdge, PublishEdge, ListEdge string
	// Form is the container's creation form.
	Form func(d *provider.Destination, o O) url.Values
	// Text is the text sent, which a found item must carry to be ours.
	Text func(d *provider.Destination, o O) string
	// StatusField and DetailField are the container's fields for its state (FINISHED, ERROR,
	// …) and for what went wrong.
	StatusField, DetailField string
	// FetchFailed reports whether an ERROR's detail says Meta could not download the video.
	FetchFailed func(detail string) bool
	// Rejected explains an ERROR's detail.
	Rejected func(detail string) string
	// ListFields are the fields read of recent items; Kind is the kind ours has ("" passes).
	ListFields, Kind string
	// LinkFields are the fields read of the published item for its link; NoLink is the
	// message when it has none ("" for none).
	LinkFields, NoLink string
	// Owner, Item, Items and TextName are the words of messages: "account", "Reel", "Reels",
	// "caption".
	Owner, Item, Items, TextName string
}

// Step implements provider.Provider's Step for the platform.
func (f *Container[O, M]) Step(ctx context.Context, d *provider.Destination) (provider.Outcome, error) {
	token, err := AccessToken(f.Platform, "access token", d.Credentials)
	if err != nil {
		return provider.Outcome{}, err
	}
	var st ContainerState
	var opts O
	if err := Decode(f.Platform, d, &st, &opts); err != nil {
		return provider.Outcome{}, err
	}
	if d.Account == "" {
		return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, 0, "%s: %s", f.Platform, f.NoAccount)
	}
	base := f.BaseURL
	if d.BaseURL != "" {
		base = d.BaseURL
	}
	g := New(f.Platform, base, token, f.HTTPClient)
	switch {
	case st.MediaID != "":
		return f.finish(ctx, g, st)
	case st.ContainerID != "":
		return f.advance(ctx, g, d, st, opts)
	default:
		return f.create(ctx, g, d, opts, st.Refetches)
	}
}

// create checks the publishing limit and creates the video container.
func (f *Container[O, M]) create(ctx context.Context, g Client, d *provider.Destination, o O, refetches int) (provider.Outcome, error) {
	if d.Video.URL == "" {
		return provider.Outcome{}, provider.Permanent(provider.CategoryInternal, 0, "%s: the video has no public link for %s to fetch", f.Platform, f.Platform)
	}
	acct := "/" + url.PathEscape(d.Account)
	if !f.SkipPublishingLimitCheck {
		var lim Quota
		// A GET: asking again changes nothing.
		err := f.Repeat.Do(ctx, f.Classify, func() error {
			var err error
			lim, err = g.PublishingLimit(ctx, acct+"/"+f.QuotaEdge)
			return err
		})
		if err != nil {
			return provider.Outcome{}, f.Classify(err)
		}
		if lim.Total > 0 && lim.Usage >= lim.Total {
			return provider.Outcome{}, provider.Permanent(provider.CategoryQuotaExceeded, 0,
				"%s: the %s has published %d of the %d posts allowed through the API in %s",
				f.Platform, f.Owner, lim.Usage, lim.Total, lim.Window)
		}
	}
	form := f.Form(d, o)
	var created struct {
		ID string `json:"id"`
	}
	// A container created twice is harmless: only the publish call makes a post of one, and
	// the other expires unpublished after 24 hours (status EXPIRED). Meta then fetches the
	// video once more.
	err := f.Repeat.Do(ctx, f.Classify, func() error { return g.Post(ctx, acct+"/"+f.CreateEdge, form, &created) })
	if err != nil {
		return provider.Outcome{}, f.Classify(err)
	}
	if created.ID == "" {
		return provider.Outcome{}, provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0, "%s: container creation answered no id", f.Platform)
	}
	st := ContainerState{ContainerID: created.ID, CreatedAt: f.Now().UTC(), Refetches: refetches}
	return f.outcome(provider.StatusProcessing, st, f.PollInitial)
}

// containerStatus reads a container's two status fields, whatever the platform names them.
// Like a struct's fields, a field absent or null in an answer keeps its earlier value.
type containerStatus struct {
	statusField, detailField string
	status, detail           string
}

func (c *containerStatus) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	for name, into := range map[string]*string{c.statusField: &c.status, c.detailField: &c.detail} {
		if v, ok := raw[name]; ok {
			if err := json.Unmarshal(v, into); err != nil {
				return fmt.Errorf("container field %s: %w", name, err)
			}
		}
	}
	return nil
}

// advance reads the container's status and publishes it when it is ready.
func (f *Container[O, M]) advance(ctx context.Context, g Client, d *provider.Destination, st ContainerState, o O) (provider.Outcome, error) {
	c := containerStatus{statusField: f.StatusField, detailField: f.DetailField}
	q := url.Values{"fields": {f.StatusField + "," + f.DetailField}}
	// A GET: asking again changes nothing.
	read := func() error {
		return f.Repeat.Do(ctx, f.Classify, func() error { return g.Get(ctx, "/"+url.PathEscape(st.ContainerID), q, &c) })
	}
	if err := read(); err != nil {
		return provider.Outcome{}, f.Classify(err)
	}
	switch c.status {
	case "FINISHED":
		var pub struct {
			ID string `json:"id"`
		}
		form := url.Values{"creation_id": {st.ContainerID}}
		// A publish call that failed may have gone through. It is made again only after the
		// container's status, read again, is still FINISHED: Graph reports PUBLISHED for a
		// container whose publish call went through.
		err := f.Repeat.DoChecked(ctx, f.Classify, func() error {
			return g.Post(ctx, "/"+url.PathEscape(d.Account)+"/"+f.PublishEdge, form, &pub)
		}, func() (bool, error) {
			if err := read(); err != nil {
				return false, err
			}
			return c.status != "FINISHED", nil
		})
		if err == nil && c.status != "FINISHED" {
			// The status moved on under a failed publish: PUBLISHED is found as a crash's
			// would be; anything else is read again at the next poll.
			if c.status == "PUBLISHED" {
				return f.recover(ctx, g, d, st, o)
			}
			return f.wait(st)
		}
		if f.NotReady(err) {
			return f.wait(st)
		}
		if err != nil {
			// When the call's fate is unknown (timeout), the next Step reads the status
			// first: PUBLISHED leads to the lookup, FINISHED to another publish.
			return provider.Outcome{}, f.Classify(err)
		}
		if pub.ID == "" {
			return provider.Outcome{}, provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0, "%s: %s answered no id", f.Platform, f.PublishEdge)
		}
		st.MediaID = pub.ID
		out, err := f.outcome(provider.StatusProcessing, st, 0)
		out.ExternalID = pub.ID
		return out, err
	case "PUBLISHED":
		return f.recover(ctx, g, d, st, o)
	case "ERROR":
		if f.FetchFailed(c.detail) && st.Refetches < f.MaxRefetches {
			// Meta could not download the video from reelay's link, which is reelay's side
			// (down or restarting), not a verdict on the video. A container in ERROR can never
			// be published, so a new one cannot publish twice.
			return f.outcome(provider.StatusProcessing, ContainerState{Refetches: st.Refetches + 1}, f.PollInitial)
		}
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0, "%s: %s", f.Platform, f.Rejected(c.detail))
	case "EXPIRED":
		return provider.Outcome{}, provider.Permanent(provider.CategoryMediaRejected, 0,
			"%s: container %s expired: it was not published within 24 hours of its creation", f.Platform, st.ContainerID)
	default: // IN_PROGRESS, or a value this provider does not know: wait.
		return f.wait(st)
	}
}

// wait counts a poll and asks to come back after the back-off.
func (f *Container[O, M]) wait(st ContainerState) (provider.Outcome, error) {
	st.Polls++
	return f.outcome(provider.StatusProcessing, st, f.backoff(st.Polls))
}

// backoff is the wait before status read number n+1 (provider.PollDelay).
func (f *Container[O, M]) backoff(n int) time.Duration {
	return provider.PollDelay(f.PollInitial, f.PollMax, n)
}

// recover finds the item of a container that is already PUBLISHED, among the owner's own
// recent items: one made at or after the container, of the right kind, whose text is exactly
// the one sent. Never the newest item blindly: it could be another post.
func (f *Container[O, M]) recover(ctx context.Context, g Client, d *provider.Destination, st ContainerState, o O) (provider.Outcome, error) {
	want := f.Text(d, o)
	q := url.Values{
		"fields": {f.ListFields},
		"since":  {strconv.FormatInt(st.CreatedAt.Add(-5*time.Minute).Unix(), 10)},
		"limit":  {"50"},
	}
	var list struct {
		Data []M `json:"data"`
	}
	// A GET: asking again changes nothing.
	err := f.Repeat.Do(ctx, f.Classify, func() error {
		return g.Get(ctx, "/"+url.PathEscape(d.Account)+"/"+f.ListEdge, q, &list)
	})
	if err != nil {
		return provider.Outcome{}, f.Classify(err)
	}
	var found []Published
	for _, m := range list.Data {
		it := m.Published()
		ts, err := ParseTime(it.Timestamp)
		if err != nil || ts.Before(st.CreatedAt.Add(-time.Minute)) {
			continue // made before our container existed (one minute of clock skew allowed)
		}
		if it.Kind != "" && it.Kind != f.Kind {
			continue
		}
		if it.Text == want {
			found = append(found, it)
		}
	}
	if len(found) == 1 {
		st.MediaID = found[0].ID
		out, err := f.outcome(provider.StatusPublished, st, 0)
		out.ExternalID, out.URL = found[0].ID, found[0].Link
		out.Message = fmt.Sprintf("%s had already published this %s; reelay found it and did not publish it again", f.Platform, f.Item)
		return out, err
	}
	st.Searches++
	if st.Searches < f.FindAttempts {
		return f.outcome(provider.StatusProcessing, st, f.backoff(st.Searches))
	}
	out, err := f.outcome(provider.StatusPublished, st, 0)
	how := fmt.Sprintf("none of the %s's recent %s matches it", f.Owner, f.Items)
	if len(found) > 1 {
		how = fmt.Sprintf("%d recent %s have the same %s", len(found), f.Items, f.TextName)
	}
	out.Message = fmt.Sprintf("%s reports container %s as published, but its %s could not be identified (%s); it was not published again",
		f.Platform, st.ContainerID, f.Item, how)
	return out, err
}

// finish reads the published item's link.
func (f *Container[O, M]) finish(ctx context.Context, g Client, st ContainerState) (provider.Outcome, error) {
	var m M
	// A GET: asking again changes nothing.
	err := f.Repeat.Do(ctx, f.Classify, func() error {
		return g.Get(ctx, "/"+url.PathEscape(st.MediaID), url.Values{"fields": {f.LinkFields}}, &m)
	})
	if err != nil {
		pe := f.Classify(err)
		if pe.Transient || pe.Category == provider.CategoryAuthExpired {
			return provider.Outcome{}, pe
		}
		// The item is published; only its link is missing.
		out, oerr := f.outcome(provider.StatusPublished, st, 0)
		out.ExternalID = st.MediaID
		out.Message = "published; reading the permalink failed: " + pe.Message
		return out, oerr
	}
	out, err := f.outcome(provider.StatusPublished, st, 0)
	out.ExternalID, out.URL = st.MediaID, m.Published().Link
	if out.URL == "" && f.NoLink != "" {
		out.Message = f.NoLink
	}
	return out, err
}

func (f *Container[O, M]) outcome(status string, st ContainerState, after time.Duration) (provider.Outcome, error) {
	return Outcome(f.Platform, status, st, after)
}
