package web

import (
	"cmp"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/registry"
	"github.com/reelay/reelay/internal/publish"
	"github.com/reelay/reelay/internal/store"
)

type publishData struct {
	Channels []store.Channel
	Sections []platformSection
	// IdempotencyKey is this form's: submitting it twice (a double click, a retried upload)
	// publishes once.
	IdempotencyKey string
	MaxTitle       int
	MaxCaption     int
	// MaxVideo is the largest video file, in words.
	MaxVideo string
	// VideoURL fills the video link in (from ?video_url=, a video the AI page made).
	VideoURL string
}

// platformSection is the part of the publish form for one platform, generated from the
// platform's registry entry (text limits with their units, options with their choices and
// defaults) and the fields its per-platform object takes.
type platformSection struct {
	Platform string
	Name     string
	// Video sums up what the platform accepts.
	Video  string
	Fields []optionField
	Notes  []string
}

// optionField is one field of a platform's object.
type optionField struct {
	Key   string // the JSON name in the platform's object
	Label string
	// Kind is "text" (with a counter), "textarea" (with a counter), "string", "choice" or
	// "boolean".
	Kind string
	// Max and Unit are the platform's limit for a text, counted its way; Fallback is what the
	// platform gets when the field is left empty (publish.FromTitle, ...).
	Max      int
	Unit     string
	Fallback string
	Choices  []string
	Default  string
	Note     string
}

func (f optionField) FieldName(platformName string) string { return platformName + "." + f.Key }

// publishPage shows the publish form for the current project's channels.
func (h *Handler) publishPage(w http.ResponseWriter, r *http.Request, s *session) error {
	p, err := h.pageFor(r, s, "Publish", "publish", nil)
	if err != nil {
		return err
	}
	d := publishData{IdempotencyKey: newToken(), MaxTitle: publish.MaxTitle, MaxCaption: publish.MaxCaption,
		MaxVideo: bytesText(media.MaxVideoBytes)}
	if v := r.URL.Query().Get("video_url"); strings.HasPrefix(v, "https://") || strings.HasPrefix(v, "http://") {
		d.VideoURL = v
	}
	if p.Project.ID != "" {
		if d.Channels, err = h.channels.List(r.Context(), s.AccountID, p.Project.ID); err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	for _, c := range d.Channels {
		if !seen[c.Platform] {
			seen[c.Platform] = true
			d.Sections = append(d.Sections, sectionOf(c.Platform))
		}
	}
	sort.Slice(d.Sections, func(i, j int) bool { return d.Sections[i].Name < d.Sections[j].Name })
	p.Data = d
	h.render(w, r, http.StatusOK, "publish", p)
	return nil
}

// sectionOf builds a platform's form section. The fields are those of the platform's object in
// publish.PlatformObjects (what the API takes); texts get the registry's limit and unit, options
// the registry's choices and defaults.
func sectionOf(name string) platformSection {
	caps, _ := registry.CapabilitiesOf(name)
	sec := platformSection{Platform: name, Name: registry.DisplayName(name), Video: videoSummary(caps), Notes: caps.Notes}
	static := registry.StaticOptions(name)
	objects := reflect.TypeOf(publish.PlatformObjects{})
	for i := range objects.NumField() {
		sf := objects.Field(i)
		if jsonName(sf) != name {
			continue
		}
		for _, of := range reflect.VisibleFields(sf.Type.Elem()) {
			if of.Anonymous {
				continue // its fields come on their own (the platform's fit)
			}
			key := jsonName(of)
			f := optionField{Key: key, Label: labelOf(key), Kind: "string"}
			opt, _ := static[key].(map[string]any)
			if note, ok := opt["note"].(string); ok {
				f.Note = note
			}
			if def, ok := opt["default"]; ok {
				f.Default = fmt.Sprint(def)
			}
			if key == "fit" {
				f.Label, f.Note = "Another aspect ratio", "overrides the post's choice for this platform"
				f.Choices = platform.FitChoices
			}
			switch {
			case of.Type.Kind() == reflect.Pointer && of.Type.Elem().Kind() == reflect.Bool:
				f.Kind = "boolean"
			case caps.Text[key].Max > 0:
				lim := caps.Text[key]
				f.Kind, f.Max, f.Unit, f.Fallback = "text", lim.Max, lim.Unit, publish.TextFallback(name, key)
				if lim.Max > 300 {
					f.Kind = "textarea"
				}
			case len(f.Choices) > 0:
				f.Kind = "choice"
			case opt["choices"] != nil:
				for _, c := range opt["choices"].([]any) {
					if s, ok := c.(string); ok {
						f.Choices = append(f.Choices, s)
					}
				}
				if len(f.Choices) > 0 {
					f.Kind = "choice"
				}
			}
			sec.Fields = append(sec.Fields, f)
		}
	}
	// The fit every object embeds comes last, after the platform's own fields.
	slices.SortStableFunc(sec.Fields, func(a, b optionField) int {
		return cmp.Compare(boolInt(a.Key == "fit"), boolInt(b.Key == "fit"))
	})
	return sec
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

func labelOf(key string) string {
	words := strings.Split(key, "_")
	for i, w := range words {
		switch w {
		case "id":
			words[i] = "ID"
		case "nsfw":
			words[i] = "NSFW"
		case "aigc":
			words[i] = "AI-generated"
		case "is":
			words[i] = ""
		}
	}
	label := strings.TrimSpace(strings.Join(words, " "))
	return strings.ToUpper(label[:1]) + label[1:]
}

// videoSummary sums up a platform's video limits in a line.
func videoSummary(c platform.Capabilities) string {
	var parts []string
	if len(c.VideoFormats) > 0 {
		parts = append(parts, strings.ToUpper(strings.Join(c.VideoFormats, ", ")))
	}
	if c.MaxDurationSeconds > 0 {
		parts = append(parts, "up to "+duration(c.MaxDurationSeconds))
	}
	if c.MinDurationSeconds > 0 {
		parts = append(parts, "at least "+duration(c.MinDurationSeconds))
	}
	if c.MaxVideoBytes > 0 {
		parts = append(parts, "at most "+bytesText(c.MaxVideoBytes))
	}
	if len(c.AspectRatios) > 0 {
		parts = append(parts, "aspect "+strings.Join(c.AspectRatios, " or "))
	}
	return strings.Join(parts, " · ")
}

func duration(sec float64) string {
	switch {
	case sec >= 3600 && int(sec)%3600 == 0:
		return fmt.Sprintf("%d h", int(sec)/3600)
	case sec >= 60 && int(sec)%60 == 0:
		return fmt.Sprintf("%d min", int(sec)/60)
	default:
		return fmt.Sprintf("%g s", sec)
	}
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1e9:
		return fmt.Sprintf("%g GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%g MB", float64(n)/1e6)
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}

// idempotencyKeyPattern is the shape of the keys the publish form makes (newToken).
var idempotencyKeyPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{16,64}$`)

// publish takes the publish form, sent by the page's script as the API's multipart form (the
// video streamed to storage as it arrives), through the very path of POST /api/v1/publish:
// publish.Service.ReadForm, then Submit for the session's account. With ?dry_run=true it runs
// every check and answers what each destination would receive. It answers JSON, which the
// script turns into messages beside the fields, or into the post's page.
func (h *Handler) publish(w http.ResponseWriter, r *http.Request, s *session) error {
	sub := publish.Submission{AccountID: s.AccountID, DryRun: r.URL.Query().Get("dry_run") == "true", CRLFLineEnds: true}
	if !sub.DryRun {
		sub.IdempotencyKey = r.Header.Get("Idempotency-Key")
		if sub.IdempotencyKey != "" && !idempotencyKeyPattern.MatchString(sub.IdempotencyKey) {
			return apierr.Field("Idempotency-Key", "is not a key this form made; reload the page")
		}
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "multipart/form-data" {
		return apierr.Newf(http.StatusUnsupportedMediaType, apierr.CodeUnsupportedMediaType,
			"the publish form is sent as multipart/form-data, got %q", r.Header.Get("Content-Type"))
	}
	r.Body = http.MaxBytesReader(w, r.Body, publish.MaxFormBytes)
	if err := h.o.Publisher.ReadRequestForm(r, &sub); err != nil {
		return err
	}
	res, err := h.o.Publisher.Submit(r.Context(), sub)
	if err != nil {
		return err
	}
	if dr := res.DryRun; dr != nil {
		dests := make([]map[string]any, len(dr.Destinations))
		for i, d := range dr.Destinations {
			dests[i] = map[string]any{"platform": d.Platform, "platform_name": registry.DisplayName(d.Platform),
				"channel_title": d.ChannelTitle, "payload": json.RawMessage(d.Payload)}
			if len(d.Derived) > 0 {
				dests[i]["derived"] = d.Derived
			}
		}
		video := map[string]any{"content_type": dr.Video.Kind.ContentType, "bytes": dr.VideoBytes}
		if dr.Video.Duration > 0 {
			video["duration_seconds"] = dr.Video.Duration.Seconds()
		}
		if dr.Video.Width > 0 {
			video["width"], video["height"] = dr.Video.Width, dr.Video.Height
		}
		writeJSON(w, http.StatusOK, map[string]any{"success": true, "dry_run": true, "status": dr.Status,
			"video": video, "platforms": dests})
		return nil
	}
	done := "published"
	if res.Post.Status == store.PostScheduled {
		done = "scheduled"
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "post_id": res.Post.ID, "status": res.Post.Status,
		"location": "/posts/" + res.Post.ID + "?done=" + done})
	return nil
}
