package connect

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/riverqueue/river"

	"github.com/reelay/reelay/internal/apierr"
	"github.com/reelay/reelay/internal/platform/registry"
	"github.com/reelay/reelay/internal/provider"
	"github.com/reelay/reelay/internal/publish"
	"github.com/reelay/reelay/internal/store"
)

// CheckChannel asks the platform of one of the account's channels whether the channel works
// (provider.Checker): another account's channel, or a disconnected one, is a 404. The token is
// renewed first when it is due; a token the platform refuses even after a renewal marks the
// channel reauth_required, as a refused publish does. The result is remembered, and a first
// failure announced (RecordChannelCheck).
func (c *Connector) CheckChannel(ctx context.Context, accountID, id string) (store.Channel, []provider.Check, error) {
	ch, err := c.Store.GetChannel(ctx, accountID, id)
	if err != nil {
		return ch, nil, channelNotFound(err)
	}
	if _, ok := c.Checkers[ch.Platform]; !ok {
		return ch, nil, apierr.Newf(http.StatusServiceUnavailable, apierr.CodeUnavailable,
			"checking %s channels is not available on this process", registry.DisplayName(ch.Platform))
	}
	checks, err := c.check(ctx, ch)
	if err != nil {
		return ch, nil, err
	}
	if fresh, err := c.Store.GetChannel(ctx, accountID, id); err == nil {
		ch = fresh // its status, after a refused token
	}
	return ch, checks, nil
}

// check runs ch's checker through a publish.ChannelCaller, which renews a due token first,
// renews a refused one and asks again, and marks the channel reauth_required when the platform
// still refuses it. It records the result.
func (c *Connector) check(ctx context.Context, ch store.Channel) ([]provider.Check, error) {
	checker := c.Checkers[ch.Platform]
	caller := publish.ChannelCaller{Access: c.Access, Tokens: c, Store: c.Store}
	var checks []provider.Check
	err := caller.Call(ctx, ch, func(pc provider.Channel) error {
		checks = checker.Check(ctx, pc)
		for _, k := range checks {
			if k.Name == provider.CheckToken && k.Status == provider.CheckFailed && k.Category == provider.CategoryAuthExpired {
				return provider.Permanent(provider.CategoryAuthExpired, 0, "%s", k.Detail)
			}
		}
		return nil
	})
	if err != nil {
		pe := provider.AsError(err)
		if pe.Category != provider.CategoryAuthExpired && checks == nil {
			// Nothing was asked: the renewal could not reach the platform.
			checks = []provider.Check{provider.Failed(provider.CheckToken, err, "try again later; if it persists, check the platform's status page")}
		}
		if pe.Category == provider.CategoryAuthExpired {
			// Renewed or not, the platform refused the token: the caller has marked the channel
			// reauth_required (channel.reauth_required announces it), and that is the line.
			checks = replaceToken(checks, provider.Failed(provider.CheckToken, err, provider.ReconnectFix))
		}
		if len(checks) == 1 {
			// Nothing else was asked: say so, so that every answer has the same lines.
			for _, name := range []string{provider.CheckScopes, provider.CheckAPIVersion, provider.CheckPublish} {
				checks = append(checks, provider.Skipped(name, "not asked: the token was not accepted"))
			}
		}
	}
	conclusive, failed := true, []store.CheckLine(nil)
	for _, k := range checks {
		if k.Status != provider.CheckFailed {
			continue
		}
		switch k.Category {
		case provider.CategoryUpstreamUnavailable, provider.CategoryRateLimited, provider.CategoryQuotaExceeded:
			// The platform did not answer: this says nothing about the channel.
			conclusive = false
		case provider.CategoryAuthExpired:
			if k.Name == provider.CheckToken {
				continue // announced as channel.reauth_required
			}
		}
		failed = append(failed, store.CheckLine{Name: k.Name, Detail: k.Detail, Fix: k.Fix})
	}
	if err := c.Store.RecordChannelCheck(context.WithoutCancel(ctx), ch.ID, c.now(), conclusive, failed); err != nil {
		return checks, err
	}
	return checks, nil
}

// replaceToken is checks with its token line replaced by token (put first when there was none).
func replaceToken(checks []provider.Check, token provider.Check) []provider.Check {
	for i, k := range checks {
		if k.Name == provider.CheckToken {
			checks[i] = token
			return checks
		}
	}
	return append([]provider.Check{token}, checks...)
}

// CheckEvery is how often the periodic check asks a platform about one channel: once a day
// keeps a channel's failure from going unnoticed for long without spending the platforms'
// rate limits on it.
const CheckEvery = 24 * time.Hour

// checkBatch is how many channels one run of the periodic check asks about: the runs, every
// checkInterval, spread a day's checks over the day instead of asking about every channel at
// once (288 a day × 50 = 14,400 channels a day).
const (
	checkBatch    = 50
	checkInterval = 5 * time.Minute
)

// CheckArgs is the periodic job that checks every channel's health, a batch at a time.
type CheckArgs struct{}

// Kind implements river.JobArgs.
func (CheckArgs) Kind() string { return "check_channels" }

// CheckWorker runs CheckArgs.
type CheckWorker struct {
	river.WorkerDefaults[CheckArgs]
	Connector *Connector
	Log       *slog.Logger
}

// Work checks the channels not checked for CheckEvery, longest unchecked first, one after the
// other; one channel's failure does not stop the others.
func (w *CheckWorker) Work(ctx context.Context, _ *river.Job[CheckArgs]) error {
	c := w.Connector
	due, err := c.Store.ChannelsDueForCheck(ctx, c.now().Add(-CheckEvery), checkBatch)
	if err != nil {
		return err
	}
	// A run ends before the next one is due, whatever the platforms' answering times: the
	// channels it leaves are the longest unchecked of the next run.
	stop := time.Now().Add(checkInterval - 30*time.Second)
	for _, ch := range due {
		if time.Now().After(stop) {
			break
		}
		if _, ok := c.Checkers[ch.Platform]; !ok {
			continue
		}
		if _, err := c.check(ctx, ch); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if w.Log != nil {
				w.Log.Warn("channel check failed", "channel", ch.ID, "platform", ch.Platform, "error", err)
			}
		}
	}
	return nil
}

// CheckJob runs the periodic channel check every checkInterval.
func CheckJob() *river.PeriodicJob {
	return river.NewPeriodicJob(river.PeriodicInterval(checkInterval),
		func() (river.JobArgs, *river.InsertOpts) { return CheckArgs{}, nil },
		&river.PeriodicJobOpts{ID: "check_channels"})
}
