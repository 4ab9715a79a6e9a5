package webhooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/reelay/reelay/internal/httpx"
	"github.com/reelay/reelay/internal/media"
	"github.com/reelay/reelay/internal/secret"
	"github.com/reelay/reelay/internal/store"
)

// QueueName is the River queue of deliveries: their own, so that slow receivers (up to
// RequestTimeout each) never hold the workers of other jobs.
const QueueName = "webhooks"

// RequestTimeout bounds one delivery attempt, from connecting to the receiver's answer.
const RequestTimeout = 10 * time.Second

// DefaultRetryBase is the first retry delay; the rest of the schedule scales with it.
const DefaultRetryBase = 5 * time.Second

// schedule is the wait after each failed attempt when the base is DefaultRetryBase: the
// Standard Webhooks example schedule (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h),
// about three days in all.
var schedule = [MaxAttempts - 1]time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour,
	5 * time.Hour, 10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour}

// MaxAttempts is how many times a delivery is tried: once, then once after each wait of the
// schedule.
const MaxAttempts = 10

// RetryDelay is the wait after failed attempt n (1-based) with the given first delay: the
// schedule scaled by base/DefaultRetryBase (so that tests can run it in milliseconds).
func RetryDelay(base time.Duration, n int) time.Duration {
	if base <= 0 {
		base = DefaultRetryBase
	}
	n = min(max(n, 1), len(schedule))
	return time.Duration(float64(schedule[n-1]) * (float64(base) / float64(DefaultRetryBase)))
}

// jitter spreads the retries of deliveries that failed together (a receiver's outage) over up
// to a tenth of the delay. It is derived from the delivery and the attempt, not drawn, so that
// the time the worker records and the time River schedules agree.
func jitter(d time.Duration, deliveryID string, attempt int) time.Duration {
	h := fnv.New64a()
	h.Write([]byte(deliveryID))
	h.Write([]byte{byte(attempt)})
	return time.Duration(h.Sum64() % uint64(d/10+1))
}

// DeliverArgs is the job that sends one delivery.
type DeliverArgs struct {
	DeliveryID string `json:"delivery_id"`
}

// Kind names the job for River.
func (DeliverArgs) Kind() string { return "webhook_delivery" }

// InsertOpts puts the job on the webhooks queue with the schedule's number of attempts.
func (DeliverArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueName, MaxAttempts: MaxAttempts}
}

// Inserter inserts a job in a store transaction (internal/jobs' Queue).
type Inserter interface {
	InsertTx(ctx context.Context, tx *store.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
}

// Enqueuer is the store's hook (store.SetWebhookEnqueuer): one delivery job per recorded
// delivery, in the transaction that recorded them, so that a delivery exists exactly when the
// change it announces was committed.
func Enqueuer(q Inserter) store.WebhookEnqueuer {
	return func(ctx context.Context, tx *store.Tx, ids []string) error {
		for _, id := range ids {
			args := DeliverArgs{DeliveryID: id}
			opts := args.InsertOpts()
			if _, err := q.InsertTx(ctx, tx, args, &opts); err != nil {
				return fmt.Errorf("webhooks: queue delivery: %w", err)
			}
		}
		return nil
	}
}

// NewClient returns the HTTP client deliveries go through: every connection's address is
// checked by policy after DNS resolution (media.SafeTransport), each attempt is bounded by
// RequestTimeout, and redirects are not followed (a 3xx is a failed attempt, as the convention
// suggests: the owner should register the new URL).
func NewClient(policy media.AddressPolicy) *http.Client {
	return &http.Client{
		Transport:     media.SafeTransport(policy),
		Timeout:       RequestTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Worker sends deliveries. A 2xx answer delivers; anything else (another status, no answer,
// a refused address) is recorded on the delivery and returned to River, which tries again
// after NextRetry, until MaxAttempts; after the last attempt, or a 410 Gone, the delivery is
// failed. Publishing never waits for any of this: deliveries are jobs of their own queue.
type Worker struct {
	river.WorkerDefaults[DeliverArgs]

	Store *store.Store
	// Box opens the webhooks' sealed secrets.
	Box *secret.Box
	// Client sends the requests (default NewClient(Policy(false))).
	Client *http.Client
	// UserAgent identifies reelay to receivers (default "reelay-webhooks").
	UserAgent string
	// RetryBase is the first retry delay (default DefaultRetryBase); see RetryDelay.
	RetryBase time.Duration
	Log       *slog.Logger
	// Now is the clock of attempts (time.Now when nil): tests move it days ahead.
	Now func() time.Time
	// Metrics counts the attempts; nil counts nothing.
	Metrics *Metrics

	once sync.Once
}

func (w *Worker) defaults() {
	if w.Client == nil {
		w.Client = NewClient(media.PublicOnly)
	}
	if w.UserAgent == "" {
		w.UserAgent = "reelay-webhooks"
	}
	if w.RetryBase <= 0 {
		w.RetryBase = DefaultRetryBase
	}
	if w.Log == nil {
		w.Log = slog.New(slog.DiscardHandler)
	}
	if w.Now == nil {
		w.Now = time.Now
	}
}

// Timeout is River's limit for one attempt: the request's, with room for the database.
func (w *Worker) Timeout(*river.Job[DeliverArgs]) time.Duration {
	return RequestTimeout + 20*time.Second
}

// NextRetry is when River tries a failed delivery again.
func (w *Worker) NextRetry(job *river.Job[DeliverArgs]) time.Time {
	w.once.Do(w.defaults)
	return time.Now().Add(w.retryDelay(job.Args.DeliveryID, job.Attempt))
}

func (w *Worker) retryDelay(deliveryID string, attempt int) time.Duration {
	d := RetryDelay(w.RetryBase, attempt)
	return d + jitter(d, deliveryID, attempt)
}

// Work makes one attempt at a delivery.
func (w *Worker) Work(ctx context.Context, job *river.Job[DeliverArgs]) error {
	w.once.Do(w.defaults)
	d, hook, err := w.Store.LoadWebhookDelivery(ctx, job.Args.DeliveryID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // the webhook was deleted, and its deliveries with it
	}
	if err != nil {
		return err
	}
	if d.Status != store.WebhookPending {
		return nil // settled by an earlier run of this job
	}
	if hook.DisabledAt != nil {
		w.Metrics.count("skipped")
		return w.Store.SkipWebhookDelivery(ctx, d.ID, "not sent: the webhook was disabled ("+hook.DisabledReason+")")
	}
	log := w.Log.With("delivery", d.ID, "webhook", hook.ID, "event", d.EventType, "attempt", job.Attempt)
	at := w.Now()
	secretText, err := OpenSecret(w.Box, hook.ID, hook.Secret)
	var key []byte
	if err == nil {
		key, err = Key(secretText)
	}
	if err != nil {
		// The server's secret key changed: no attempt can ever be signed.
		log.Error("cannot open the webhook's signing secret", "error", err)
		rerr := w.Store.RecordWebhookAttempt(ctx, d.ID, store.WebhookAttempt{Status: store.WebhookFailed,
			Error: "reelay cannot open this webhook's signing secret; register the webhook again", At: at})
		return errors.Join(river.JobCancel(err), rerr)
	}

	code, asked, err := w.send(ctx, hook.URL, key, d, at)
	if err == nil {
		log.Debug("webhook delivered", "status", code)
		w.Metrics.count("delivered")
		return w.Store.RecordWebhookAttempt(ctx, d.ID, store.WebhookAttempt{Status: store.WebhookDelivered, StatusCode: code, At: at})
	}
	if ctx.Err() != nil {
		// Shutdown or the job's time limit: River runs the job again; this was no attempt.
		return ctx.Err()
	}
	a := store.WebhookAttempt{Status: store.WebhookPending, StatusCode: code, Error: err.Error(), At: at}
	gone := code == http.StatusGone
	// The delivery counts its attempts; River does not count those its job snoozed.
	attempt := max(job.Attempt, d.Attempts+1)
	var delay time.Duration
	if gone || attempt >= job.MaxAttempts {
		a.Status = store.WebhookFailed
	} else {
		delay = max(w.retryDelay(d.ID, attempt), min(asked, maxRetryAfter))
		next := at.Add(delay)
		a.NextAttemptAt = &next
	}
	log.Info("webhook delivery failed", "status", code, "error", err, "final", a.Status == store.WebhookFailed)
	if a.Status == store.WebhookFailed {
		w.Metrics.count("failed")
	} else {
		w.Metrics.count("retried")
	}
	if rerr := w.Store.RecordWebhookAttempt(ctx, d.ID, a); rerr != nil {
		return errors.Join(err, rerr)
	}
	if a.Status == store.WebhookFailed {
		if derr := w.disableIfDead(ctx, hook, gone, err, at); derr != nil {
			log.Error("could not disable the webhook", "error", derr)
		}
	}
	switch {
	case gone:
		// The receiver says it wants no more: retrying would only bother it.
		return river.JobCancel(err)
	case a.Status == store.WebhookPending && (attempt != job.Attempt || delay != w.retryDelay(d.ID, job.Attempt)):
		// A wait River's NextRetry would not choose (the receiver's Retry-After, or the
		// schedule's next step after such a wait): the job waits it out as a snooze, which
		// River does not count as an attempt, so the delivery's own count decides the end.
		return river.JobSnooze(delay)
	}
	return err
}

// disableIfDead disables a webhook after a delivery failed for good, when its receiver said
// it is gone (410), or when no delivery was taken for store.WebhookDisableAfter: its events
// would only pile up failing. Its owner enables it again (PATCH /webhooks/{id}).
func (w *Worker) disableIfDead(ctx context.Context, hook store.Webhook, gone bool, cause error, at time.Time) error {
	var reason string
	switch {
	case gone:
		reason = "the receiver answered 410 Gone"
	case at.Sub(hook.CreatedAt) >= store.WebhookDisableAfter:
		taken, err := w.Store.WebhookDeliveredSince(ctx, hook.ID, at.Add(-store.WebhookDisableAfter))
		if err != nil || taken {
			return err
		}
		reason = fmt.Sprintf("no delivery was taken for %d days; the last failed with: %v",
			int(store.WebhookDisableAfter.Hours()/24), cause)
	default:
		return nil
	}
	w.Log.Warn("webhook disabled", "webhook", hook.ID, "reason", reason)
	return w.Store.DisableWebhook(ctx, hook.ID, reason, at)
}

// maxRetryAfter bounds the wait a receiver may ask for: the longest of the schedule.
const maxRetryAfter = 24 * time.Hour

// send POSTs a delivery's payload, signed for this attempt, and answers the receiver's status
// (0 when it did not answer), the wait it asked for (Retry-After with a 429 or a 503) and,
// unless it is a 2xx, why the attempt failed.
func (w *Worker) send(ctx context.Context, target string, key []byte, d store.WebhookDelivery, at time.Time) (int, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(d.Payload))
	if err != nil {
		return 0, 0, fmt.Errorf("the webhook URL cannot be requested: %v", err)
	}
	ts := at.Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", w.UserAgent)
	req.Header.Set(HeaderID, d.EventID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderSignature, Sign(key, d.EventID, ts, d.Payload))
	resp, err := w.Client.Do(req)
	if err != nil {
		return 0, 0, describe(err)
	}
	// Read a little of the answer so the connection can be reused; its content is not kept.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp.StatusCode, 0, nil
	}
	var asked time.Duration
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		asked, _ = httpx.RetryAfter(resp.Header, time.Now())
	}
	return resp.StatusCode, asked, fmt.Errorf("the receiver answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
}

// describe says why a request got no answer, without the URL (which may carry a token).
func describe(err error) error {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("the receiver did not answer within %s", RequestTimeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var blocked *media.BlockedError
	if errors.As(err, &blocked) {
		return blocked
	}
	if errors.Is(err, media.ErrBlockedAddress) {
		return fmt.Errorf("the webhook URL leads to an address reelay does not connect to (%v)", err)
	}
	msg := err.Error()
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	return fmt.Errorf("no answer from the receiver: %s", msg)
}

// CheckURL checks a webhook URL at registration: an absolute http(s) URL without credentials,
// whose host resolves only to addresses policy allows (the same guard deliveries go through,
// which checks again at every connection, so DNS changes after registration gain nothing).
// The error's message is meant for the client.
func CheckURL(ctx context.Context, raw string, policy media.AddressPolicy) (*url.URL, error) {
	if len(raw) > 2048 {
		return nil, errors.New("must be at most 2048 characters")
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	switch {
	case err != nil || !u.IsAbs() || u.Opaque != "":
		return nil, errors.New("must be an absolute http or https URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("must be an http or https URL, not %s", u.Scheme)
	case u.User != nil:
		return nil, errors.New("must not contain a user name or password; the signature authenticates deliveries")
	case u.Hostname() == "":
		return nil, errors.New("has no host")
	case u.Fragment != "":
		return nil, errors.New("must not contain a fragment (#...)")
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("has an invalid port %q", port)
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(rctx, "ip", u.Hostname())
	if err != nil || len(addrs) == 0 {
		return nil, fmt.Errorf("the host %s does not resolve", u.Hostname())
	}
	for _, a := range addrs {
		if err := policy(netip.AddrPortFrom(a.Unmap(), uint16(p))); err != nil {
			return nil, media.ForHost(err, u.Hostname())
		}
	}
	return u, nil
}
