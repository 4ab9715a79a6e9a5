package reddit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/coder/websocket"
)

// wsMessage is what Reddit's media websocket sends once: {"type":"success","payload":
// {"redirect": post URL}} or {"type":"failed"}.
type wsMessage struct {
	Type    string `json:"type"`
	Payload struct {
		Redirect string `json:"redirect"`
		Message  string `json:"message"`
	} `json:"payload"`
}

// watch is an open connection to a media websocket and the goroutine that waits for its one
// message. It outlives the Step that opened it: the connection is made before the submit (as
// Reddit requires, or the result is missed) and the result usually comes during a later Step.
type watch struct {
	conn    *websocket.Conn
	cancel  context.CancelFunc
	created time.Time     // real time, for pruning
	done    chan struct{} // closed when msg or err is set
	msg     wsMessage
	err     error
}

// dial connects to a media websocket and starts waiting for its message.
func (p *Provider) dial(ctx context.Context, rawURL string) (*watch, error) {
	if rawURL == "" {
		return nil, errors.New("no websocket URL")
	}
	dctx, cancel := context.WithTimeout(ctx, p.cfg.APITimeout)
	defer cancel()
	conn, resp, err := websocket.Dial(dctx, rawURL, &websocket.DialOptions{
		HTTPClient: p.cfg.HTTPClient,
		HTTPHeader: http.Header{"User-Agent": {p.cfg.UserAgent}},
	})
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("HTTP %d: %w", resp.StatusCode, err)
		}
		return nil, err
	}
	rctx, rcancel := context.WithTimeout(context.Background(), p.cfg.WatchTTL)
	w := &watch{conn: conn, cancel: rcancel, done: make(chan struct{}), created: time.Now()}
	go func() {
		defer close(w.done)
		defer rcancel()
		_, data, err := conn.Read(rctx)
		if err != nil {
			w.err = err
			_ = conn.CloseNow()
			return
		}
		if err := json.Unmarshal(data, &w.msg); err != nil || w.msg.Type == "" {
			w.err = fmt.Errorf("unexpected websocket message %.200q", data)
		}
		_ = conn.Close(websocket.StatusNormalClosure, "")
	}()
	return w, nil
}

// wait waits up to d (real time) for the message; ok is false when it has not come yet.
func (w *watch) wait(ctx context.Context, d time.Duration) (ok bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w.done:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

func (w *watch) close() {
	w.cancel()
	_ = w.conn.CloseNow()
}

// Watches in memory, by destination and asset.

func (p *Provider) putWatch(destID, assetID string, w *watch) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if old := p.watches[destID+"|"+assetID]; old != nil && old != w {
		old.close()
	}
	// Destinations that never came back (canceled, failed elsewhere) leave their watch behind;
	// it has ended by WatchTTL.
	for k, o := range p.watches {
		select {
		case <-o.done:
			if time.Since(o.created) > p.cfg.WatchTTL {
				delete(p.watches, k)
			}
		default:
		}
	}
	p.watches[destID+"|"+assetID] = w
}

func (p *Provider) getWatch(destID, assetID string) *watch {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.watches[destID+"|"+assetID]
}

func (p *Provider) dropWatch(destID, assetID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w := p.watches[destID+"|"+assetID]; w != nil {
		w.close()
		delete(p.watches, destID+"|"+assetID)
	}
}

// Close closes the websocket connections the provider holds for destinations still
// processing. A later Step of such a destination reconnects and looks for the post.
func (p *Provider) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, w := range p.watches {
		w.close()
		delete(p.watches, k)
	}
}
