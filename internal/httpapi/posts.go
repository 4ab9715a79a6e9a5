package httpapi

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/conform"
	"github.com/reelay/reelay/internal/publish"
	"github.com/reelay/reelay/internal/store"
)

// destinationJSON is one destination's result (publish_results / platforms).
type destinationJSON struct {
	DestinationID string     `json:"destination_id"`
	Platform      string     `json:"platform"`
	ChannelID     string     `json:"channel_id"`
	ChannelTitle  string     `json:"channel_title"`
	Success       bool       `json:"success"`
	Published     bool       `json:"published"`
	UploadStatus  string     `json:"upload_status"`
	ID            *string    `json:"id"`
	URL           *string    `json:"url"`
	Error         *string    `json:"error"`
	ErrorCategory *string    `json:"error_category"`
	Message       string     `json:"message,omitempty"`
	PublishedAt   *time.Time `json:"published_at"`
	// Derived names the texts sent to the platform that reelay filled in, and where each
	// came from.
	Derived publish.Derived `json:"derived,omitempty"`
	// Conversion is what the destination's video needed for its platform, absent for posts
	// made before reelay planned conversions.
	Conversion *conversionJSON `json:"conversion,omitempty"`
}

// conversionJSON is a destination's conform.Plan as the API shows it: what and why, not the
// encoder's settings.
type conversionJSON struct {
	Action  string   `json:"action"`
	Changes []string `json:"changes"`
	Reasons []string `json:"reasons"`
}

func toConversionJSON(p conform.Plan) *conversionJSON {
	return &conversionJSON{Action: p.Action, Changes: p.Changes, Reasons: p.Reasons}
}

// storedConversion reads a destination's stored plan; nil when it has none.
func storedConversion(raw json.RawMessage) *conversionJSON {
	var p conform.Plan
	if len(raw) == 0 || json.Unmarshal(raw, &p) != nil {
		return nil
	}
	return toConversionJSON(p)
}

func toDestinationJSON(d store.Destination) destinationJSON {
	return destinationJSON{
		DestinationID: d.ID, Platform: d.Platform, ChannelID: d.ChannelID, ChannelTitle: d.ChannelName,
		// Rule 1 of docs/CONTRACT.md, Publishing: success can be true before publication; it
		// is false only once the destination failed or was canceled.
		Success:      d.Status != store.DestFailed && d.Status != store.DestCanceled,
		Published:    d.Status == store.DestPublished,
		UploadStatus: d.Status, ID: nullable(d.ExternalID), URL: nullable(d.URL), Error: nullable(d.Error),
		ErrorCategory: nullable(d.ErrorCategory), Message: d.Message, PublishedAt: d.PublishedAt,
		Conversion: storedConversion(d.Conversion),
	}
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

type postJSON struct {
	ID             string            `json:"id"`
	ProjectID      string            `json:"project_id"`
	Status         string            `json:"status"`
	Platforms      []string          `json:"platforms"`
	Title          string            `json:"title"`
	Caption        string            `json:"caption"`
	ScheduledFor   *time.Time        `json:"scheduled_for"`
	PublishedAt    *time.Time        `json:"published_at"`
	CreatedAt      time.Time         `json:"created_at"`
	PublishResults []destinationJSON `json:"publish_results"`
}

func toPostJSON(p store.Post) postJSON {
	out := postJSON{ID: p.ID, ProjectID: p.ProjectID, Status: p.Status, Platforms: []string{}, Title: p.Title,
		Caption: p.Caption, ScheduledFor: p.ScheduledFor, PublishedAt: p.PublishedAt, CreatedAt: p.CreatedAt,
		PublishResults: make([]destinationJSON, len(p.Destinations))}
	derived := publish.DerivedTexts(p)
	for i, d := range p.Destinations {
		out.PublishResults[i] = toDestinationJSON(d)
		out.PublishResults[i].Derived = derived[d.Platform]
		if !slices.Contains(out.Platforms, d.Platform) {
			out.Platforms = append(out.Platforms, d.Platform)
		}
	}
	return out
}

// postResponse is GET /posts/{id}'s body: the post with the success flag.
func postResponse(p store.Post) any {
	return struct {
		Success bool `json:"success"`
		postJSON
	}{true, toPostJSON(p)}
}

// publishResponse is POST /publish's body (docs/CONTRACT.md, Publishing).
func publishResponse(p store.Post) map[string]any {
	return map[string]any{
		"success":       p.Status != store.PostFailed && p.Status != store.PostCanceled,
		"post_id":       p.ID,
		"status":        p.Status,
		"platforms":     toPostJSON(p).PublishResults,
		"scheduled_for": p.ScheduledFor,
	}
}

func dryRunJSON(dr *publish.DryRun) map[string]any {
	dests := make([]map[string]any, len(dr.Destinations))
	for i, d := range dr.Destinations {
		dests[i] = map[string]any{"platform": d.Platform, "channel_id": d.ChannelID, "channel_title": d.ChannelTitle,
			"payload": d.Payload, "conversion": toConversionJSON(d.Conversion)}
		if len(d.Derived) > 0 {
			dests[i]["derived"] = d.Derived
		}
	}
	v := dr.Video
	video := map[string]any{"content_type": v.Kind.ContentType, "bytes": dr.VideoBytes,
		"duration_seconds": nil, "width": nil, "height": nil, "video_codec": v.VideoCodec, "video_profile": v.VideoProfile,
		"frame_rate": nil, "bitrate": nil, "audio_codec": v.AudioCodec}
	if v.FrameRate > 0 {
		video["frame_rate"] = v.FrameRate
	}
	if v.Bitrate > 0 {
		video["bitrate"] = v.Bitrate
	}
	if dr.Video.Duration > 0 {
		video["duration_seconds"] = dr.Video.Duration.Seconds()
	}
	if dr.Video.Width > 0 {
		video["width"], video["height"] = dr.Video.Width, dr.Video.Height
	}
	return map[string]any{"success": true, "dry_run": true, "status": dr.Status, "video": video, "platforms": dests}
}

func (s *Server) getPost(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	p, err := s.posts.Get(r.Context(), mustPrincipal(r).AccountID, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, postResponse(p))
	return nil
}

// listPosts is the post history, newest first, paged by an opaque cursor.
func (s *Server) listPosts(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var f apierr.Fields
	filter := store.PostFilter{ProjectID: q.Get("project_id"), Status: q.Get("status")}
	if filter.ProjectID == "" {
		filter.ProjectID = q.Get("projectId")
	}
	if filter.ProjectID != "" && !store.ValidID(filter.ProjectID) {
		f.Add("project_id", "must be a UUID")
	}
	filter.Platform = q.Get("platform")
	filter.CreatedSince, filter.CreatedBefore = timeRangeQuery(q, &f, "created_since", "created_before")
	filter.ScheduledSince, filter.ScheduledBefore = timeRangeQuery(q, &f, "scheduled_since", "scheduled_before")
	limit, err := limitQuery(r, 20, 100)
	if err != nil {
		return err
	}
	pq := publish.PostQuery{Filter: filter, Limit: limit, Cursor: q.Get("cursor")}
	s.posts.CheckList(&f, pq)
	if err := f.Err(); err != nil {
		return err
	}
	if filter.ProjectID != "" {
		if _, err := s.ownProject(r, filter.ProjectID); err != nil {
			return err
		}
	}
	posts, next, err := s.posts.List(r.Context(), mustPrincipal(r).AccountID, pq)
	if err != nil {
		return err
	}
	out := make([]postJSON, len(posts))
	for i, p := range posts {
		out[i] = toPostJSON(p)
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "posts": out, "next_cursor": next})
	return nil
}

// timeQuery reads an optional time parameter: RFC 3339, or a date as YYYY-MM-DD (its start in
// UTC).
func timeQuery(q url.Values, f *apierr.Fields, name string) *time.Time {
	v := q.Get(name)
	if v == "" {
		return nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		t, err = time.Parse(time.DateOnly, v)
	}
	if err != nil {
		f.Add(name, "must be a time as RFC 3339 or a date as YYYY-MM-DD")
		return nil
	}
	return &t
}

// timeRangeQuery reads a half-open range of two optional time parameters, since (included) and
// before (excluded); one that ends where it starts, or before, is refused.
func timeRangeQuery(q url.Values, f *apierr.Fields, since, before string) (*time.Time, *time.Time) {
	from, to := timeQuery(q, f, since), timeQuery(q, f, before)
	if from != nil && to != nil && !to.After(*from) {
		f.Addf(before, "must be later than %s", since)
	}
	return from, to
}

func limitQuery(r *http.Request, def, max int) (int, error) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > max {
		return 0, apierr.Field("limit", "must be an integer from 1 to "+strconv.Itoa(max))
	}
	return n, nil
}

func (s *Server) cancelPost(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	p, err := publish.Cancel(r.Context(), s.store, mustPrincipal(r).AccountID, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, postResponse(p))
	return nil
}

// updatePostRequest is PATCH /posts/{id}: each field present replaces the stored one.
type updatePostRequest struct {
	ScheduledFor *string `json:"scheduled_for"`
	Title        *string `json:"title"`
	Caption      *string `json:"caption"`
	publish.PlatformObjects
}

func (s *Server) updatePost(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	var body updatePostRequest
	if err := decodeJSON(w, r, &body); err != nil {
		return err
	}
	if body.ScheduledFor == nil && body.Title == nil && body.Caption == nil && body.PlatformObjects.Empty() {
		return apierr.Field("body", "give at least one of scheduled_for, title, caption or a platform object")
	}
	p, err := publish.Update(r.Context(), s.store, s.queue, mustPrincipal(r).AccountID, id, publish.Change{
		ScheduledFor: body.ScheduledFor, Title: body.Title, Caption: body.Caption, PlatformObjects: body.PlatformObjects})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, postResponse(p))
	return nil
}

func (s *Server) retryPost(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	p, err := publish.Retry(r.Context(), s.store, s.queue, mustPrincipal(r).AccountID, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, postResponse(p))
	return nil
}

// accountUsage answers the account's plan usage this month.
func (s *Server) accountUsage(w http.ResponseWriter, r *http.Request) error {
	accountID := mustPrincipal(r).AccountID
	u, err := s.store.GetUsage(r.Context(), accountID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "account_id": accountID, "month": u.Month,
		"posts_this_month": u.Posts, "monthly_post_limit": u.MonthlyPostLimit, "ai_credits": u.AICredits})
	return nil
}

// media serves stored media by signed link, without credentials: the link is the credential.
func (s *Server) serveMedia(w http.ResponseWriter, r *http.Request) error {
	key, err := s.media.VerifySignedURL(r.PathValue("id"), r.URL.Query())
	if err != nil {
		return apierr.New(http.StatusForbidden, apierr.CodeForbidden, "this media link is invalid or has expired")
	}
	if err := s.media.ServeBlob(w, r, key); err != nil {
		return apierr.NotFound("media")
	}
	return nil
}
