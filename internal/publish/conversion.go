package publish

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/conform"
	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/platform/registry"
	"github.com/reelay/reelay/internal/render"
	"github.com/reelay/reelay/internal/store"
)

// Converter makes renditions: render.Renderer, running ffmpeg.
type Converter interface {
	// Check reports whether conversions can run (ffmpeg is installed).
	Check(ctx context.Context) error
	// Convert writes to dst the video at src converted by c, telling progress (0 to 1).
	Convert(ctx context.Context, dst, src string, c render.Conversion, progress func(fraction float64)) error
}

// Interface assertion: the renderer is what converts.
var _ Converter = (*render.Renderer)(nil)

// planConversions decides, for each destination, what its video (size bytes, probed as
// info, stored as sourceSHA256) needs for its platform (conform.Decide), and records it on the
// destination: its plan, and the rendition it is to be sent instead, named by RenditionKey.
// What cannot be mended, and a conversion that cannot run (ready says why; nil: it can), are
// added to f under field, naming the platform.
func planConversions(f *apierr.Fields, field string, req *Request, dests []store.Destination, sourceSHA256 string, size int64, info media.Info, ready func() error) map[string]conform.Plan {
	plans := map[string]conform.Plan{}
	for i := range dests {
		d := &dests[i]
		plan, seen := plans[d.Platform]
		if !seen {
			desc, _ := registry.Describe(d.Platform)
			var refusals []string
			plan, refusals = conform.Decide(desc, size, info, req.conformOptions(desc))
			plans[d.Platform] = plan
			for _, r := range refusals {
				f.Add(field, r)
			}
			if plan.Converts() && ready != nil {
				if err := ready(); err != nil {
					f.Addf(field, "%s; reelay converts such a video for %s with ffmpeg, which this server cannot run: %v",
						strings.Join(plan.Reasons, "; "), desc.Name, err)
				}
			}
		}
		d.Conversion, _ = json.Marshal(plan)
		d.RenditionKey = ""
		if plan.Converts() {
			d.RenditionKey = RenditionKey(sourceSHA256, plan.Conversion)
		}
	}
	return plans
}

// RenditionKey names the rendition of the file sourceSHA256 by c: the same conversion of the
// same file has the same name, whichever post or platform asks for it, and is made once.
func RenditionKey(sourceSHA256 string, c render.Conversion) string {
	conv, _ := json.Marshal(c)
	h := sha256.New()
	h.Write([]byte(sourceSHA256))
	h.Write([]byte{0})
	h.Write(conv)
	return hex.EncodeToString(h.Sum(nil))
}

// ensureRenditions makes sure every rendition that p's destinations need exists, in the
// transaction that creates or retries them, and queues a job for each that is to be made.
func ensureRenditions(ctx context.Context, q Enqueuer, tx *store.Tx, p store.Post) error {
	for _, d := range p.Destinations {
		if d.RenditionKey == "" {
			continue
		}
		var plan conform.Plan
		if err := json.Unmarshal(d.Conversion, &plan); err != nil {
			return fmt.Errorf("publish: destination %s: reading its conversion: %w", d.ID, err)
		}
		conv, _ := json.Marshal(plan.Conversion)
		needed, err := tx.EnsureRendition(ctx, d.RenditionKey, p.VideoSHA256, string(conv))
		if err != nil {
			return err
		}
		if !needed {
			continue
		}
		if _, err := q.InsertTx(ctx, tx, RenditionArgs{Key: d.RenditionKey}, nil); err != nil {
			return fmt.Errorf("publish: queue rendition: %w", err)
		}
	}
	return nil
}

// infoOf is what the probe read of a stored file, as it was recorded.
func infoOf(m store.Media) media.Info {
	kind, _ := media.KindByName(m.Kind)
	return media.Info{Kind: kind, Duration: m.Duration, Width: m.Width, Height: m.Height, VideoCodec: m.VideoCodec,
		AudioCodec: m.AudioCodec, AudioChannels: m.AudioChannels, AudioSampleRate: m.AudioSampleRate,
		FrameRate: m.FrameRate, MaxFrameRate: m.MaxFrameRate, MoovAfterMdat: m.MoovAfterMdat, EditList: m.EditList}
}
