package connect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/reelay/reelay/internal/platform/registry"
	"github.com/reelay/reelay/internal/provider"
	"github.com/reelay/reelay/internal/store"
)

// RefreshAhead is how long before its expiry a token is refreshed.
const RefreshAhead = 30 * time.Minute

// leaseTTL bounds one refresh: a holder that dies frees the channel after it.
const leaseTTL = 2 * time.Minute

// Refresh renews a channel's access token when it is due (or at once when force: the platform
// just refused it) and returns the channel as stored afterwards. Only one process refreshes a
// channel at a time: the others wait for its result. A refresh the platform refuses marks the
// channel reauth_required and answers a permanent auth_expired error; a platform in trouble
// answers a transient one and leaves the channel as it was.
func (c *Connector) Refresh(ctx context.Context, ch store.Channel, force bool) (store.Channel, error) {
	d, ok := dialects[ch.Platform]
	if !ok {
		if force {
			return ch, provider.Permanent(provider.CategoryAuthExpired, 0, "%s refused the channel's credentials; reconnect it", registry.DisplayName(ch.Platform))
		}
		return ch, nil
	}
	if !force && !c.due(ch) {
		return ch, nil
	}
	seen := ch.TokenExpiresAt
	got, err := c.Store.AcquireRefreshLease(ctx, ch.ID, c.now().Add(leaseTTL))
	if err != nil {
		return ch, err
	}
	if !got {
		return c.awaitRefresh(ctx, ch.ID)
	}
	// Another process may have refreshed between our read and the lease.
	fresh, err := c.Store.ChannelByID(ctx, ch.ID)
	if err != nil {
		_ = c.Store.ReleaseRefreshLease(context.WithoutCancel(ctx), ch.ID, "")
		return ch, err
	}
	if !sameTime(fresh.TokenExpiresAt, seen) && !c.due(fresh) {
		return fresh, c.Store.ReleaseRefreshLease(ctx, ch.ID, "")
	}
	tok, creds, err := c.renew(ctx, d, fresh)
	if err != nil {
		status := ""
		if pe := provider.AsError(err); !pe.Transient {
			status = store.ChannelReauthRequired
		}
		if rerr := c.Store.ReleaseRefreshLease(context.WithoutCancel(ctx), ch.ID, status); rerr != nil {
			return fresh, rerr
		}
		return fresh, err
	}
	creds["access_token"] = tok.AccessToken
	if tok.RefreshToken != "" {
		// TikTok and others rotate refresh tokens: the new one replaces the old.
		creds["refresh_token"] = tok.RefreshToken
	}
	fresh.TokenExpiresAt = tok.expiry(c.now())
	fresh.Credentials = c.Access.Seal(fresh, creds)
	if err := c.Store.SaveRefreshedCredentials(ctx, fresh.ID, fresh.Credentials, fresh.TokenExpiresAt); err != nil {
		return fresh, err
	}
	fresh.Status = store.ChannelActive
	return fresh, nil
}

func (c *Connector) renew(ctx context.Context, d dialect, ch store.Channel) (token, map[string]string, error) {
	_, creds, err := c.Access.Open(ch)
	if err != nil {
		return token{}, nil, provider.Permanent(provider.CategoryAuthExpired, 0, "%v", err)
	}
	cl, err := c.client(ch.Platform, ch.Sandbox)
	if err != nil {
		return token{}, nil, provider.Permanent(provider.CategoryAuthExpired, 0, "cannot refresh: no %s app is configured", registry.DisplayName(ch.Platform))
	}
	tok, err := d.refresh(ctx, c.httpClient(), c.oauthRoot(ch.Platform, ch.Sandbox), cl, creds)
	return tok, creds, err
}

func (c *Connector) due(ch store.Channel) bool {
	return ch.TokenExpiresAt != nil && ch.TokenExpiresAt.Before(c.now().Add(RefreshAhead))
}

// awaitRefresh waits for another process's refresh of the channel to end and returns the
// channel as it left it.
func (c *Connector) awaitRefresh(ctx context.Context, id string) (store.Channel, error) {
	deadline := time.Now().Add(leaseTTL)
	for {
		select {
		case <-ctx.Done():
			return store.Channel{}, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		ch, err := c.Store.ChannelByID(ctx, id)
		if err != nil {
			return ch, err
		}
		held, err := c.Store.AcquireRefreshLease(ctx, id, c.now().Add(leaseTTL))
		if err != nil {
			return ch, err
		}
		if held {
			// The other refresh ended: what it stored is the answer.
			if err := c.Store.ReleaseRefreshLease(ctx, id, ""); err != nil {
				return ch, err
			}
			if ch, err = c.Store.ChannelByID(ctx, id); err != nil {
				return ch, err
			}
			if ch.Status == store.ChannelReauthRequired {
				return ch, provider.Permanent(provider.CategoryAuthExpired, 0, "%s refused to renew the channel's token; reconnect it", registry.DisplayName(ch.Platform))
			}
			return ch, nil
		}
		if time.Now().After(deadline) {
			return ch, provider.Transient(provider.CategoryUpstreamUnavailable, 0, 0, "another process is still refreshing the channel's token")
		}
	}
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// RefreshArgs is the periodic job that refreshes every token about to expire.
type RefreshArgs struct{}

// Kind implements river.JobArgs.
func (RefreshArgs) Kind() string { return "refresh_tokens" }

// RefreshWorker runs RefreshArgs.
type RefreshWorker struct {
	river.WorkerDefaults[RefreshArgs]
	Connector *Connector
	Log       *slog.Logger
}

// Work refreshes the channels due, a batch at a time; one channel's failure does not stop the
// others.
func (w *RefreshWorker) Work(ctx context.Context, _ *river.Job[RefreshArgs]) error {
	c := w.Connector
	due, err := c.Store.ChannelsDueForRefresh(ctx, c.now().Add(RefreshAhead), 200)
	if err != nil {
		return err
	}
	var failed int
	for _, ch := range due {
		if _, err := c.Refresh(ctx, ch, false); err != nil {
			failed++
			if w.Log != nil {
				w.Log.Warn("token refresh failed", "channel", ch.ID, "platform", ch.Platform, "error", err)
			}
		}
	}
	if failed > 0 && failed == len(due) {
		return fmt.Errorf("connect: all %d token refreshes failed", failed)
	}
	return nil
}

// RefreshJob runs the refresher every five minutes: tokens are refreshed RefreshAhead before
// they expire, so a run may be missed without any token lapsing.
func RefreshJob() *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(5*time.Minute),
		func() (river.JobArgs, *river.InsertOpts) { return RefreshArgs{}, nil },
		&river.PeriodicJobOpts{RunOnStart: true, ID: "refresh_tokens"})
}

// ErrRefusal reports whether err is a refused callback.
func ErrRefusal(err error) (*Refusal, bool) {
	var r *Refusal
	ok := errors.As(err, &r)
	return r, ok
}
