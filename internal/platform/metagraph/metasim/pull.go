package metasim

// Instagram and Threads containers fetch their video_url in the background, as Meta's servers
// do: the request that creates a container answers its id at once. The fetch is made by one
// process at a time: the one that holds the container's lease, which it renews while the
// download runs. A process that finds the lease run out (its holder died) takes the fetch up
// again, so that a container created just before a crash still finishes; the result of a fetch
// that lost its lease is dropped, so a container is fetched, checked and recorded once.

import (
	"context"
	"time"

	"github.com/reelay/reelay/internal/platform/sim"
)

// The lease of a container's fetch, on the wall clock (not Config.Now, which tests move by
// hours): renewed every pullRenew while the fetch runs, it lapses PullLease after its holder
// stopped renewing it.
const (
	PullLease = 20 * time.Second
	pullRenew = PullLease / 4
)

// Pull is the state of a container's fetch of its video_url.
type Pull struct {
	// URL is the video's address until it is fetched, then "": it may be a signed link, a
	// credential the record keeps no longer than it needs to.
	URL string `json:"url,omitempty"`
	// Attempt names the fetch that holds Lease; Done says the fetch and the checks are over.
	Attempt string    `json:"attempt,omitempty"`
	Lease   time.Time `json:"lease,omitzero"`
	Done    bool      `json:"done,omitempty"`
}

// NewPull is the fetch of url about to start.
func NewPull(url string) Pull {
	return Pull{URL: url, Attempt: sim.RandomHex(8), Lease: time.Now().Add(PullLease)}
}

// Fetcher runs the fetches of one simulator's containers, records of type C.
type Fetcher[C, R any] struct {
	Config sim.Config
	// pull is the container's fetch state.
	Pull func(c *C) *Pull
	// fetch downloads the video of a container (its URL in pull) and checks it; upload is what
	// arrived when the download was complete (nil otherwise), recorded with the result.
	Fetch func(ctx context.Context, c C) (r R, upload *sim.Upload)
	// apply writes a fetch's result into the container.
	Apply func(c *C, r R)
	// timeout bounds one fetch.
	Timeout time.Duration
}

// start runs the fetch named attempt of the container under key in the background.
func (f Fetcher[C, R]) Start(key sim.Key, attempt string) {
	go f.Run(key, attempt)
}

// run fetches, renewing the lease meanwhile, then writes the result if the lease is still its.
func (f Fetcher[C, R]) Run(key sim.Key, attempt string) {
	ctx, cancel := context.WithTimeout(context.Background(), f.Timeout)
	defer cancel()
	c, _, found, err := sim.Load[C](ctx, f.Config.State, key)
	if err != nil || !found || f.Pull(&c).Attempt != attempt {
		return
	}
	stop := KeepRenewed(ctx, func(ctx context.Context) bool {
		if !f.renew(ctx, key, attempt) {
			cancel() // another process took the fetch over
			return false
		}
		return true
	})
	r, upload := f.Fetch(ctx, c)
	stop()
	// The result is written whatever happened to the request's context: on a context of its own.
	wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer wcancel()
	_ = f.Config.State.Update(wctx, func(tx sim.Tx) error {
		c, rec, found, err := sim.LoadTx[C](tx, key)
		if err != nil || !found {
			return err
		}
		p := f.Pull(&c)
		if p.Attempt != attempt || p.Done {
			return nil // the fetch was taken over: its result is the other's to write
		}
		f.Apply(&c, r)
		*p = Pull{Done: true}
		if upload != nil {
			if err := sim.RecordTx(tx, key.Platform, *upload); err != nil {
				return err
			}
		}
		return sim.Save(tx, rec, c)
	})
}

// KeepRenewed calls renew every pullRenew, until it answers false or stop is called; stop
// returns once renew no longer runs.
func KeepRenewed(ctx context.Context, renew func(ctx context.Context) bool) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(pullRenew)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if !renew(ctx) {
					return
				}
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// renew extends the lease of attempt; false when the fetch is no longer attempt's.
func (f Fetcher[C, R]) renew(ctx context.Context, key sim.Key, attempt string) bool {
	ours := false
	err := f.Config.State.Update(ctx, func(tx sim.Tx) error {
		ours = false
		c, rec, found, err := sim.LoadTx[C](tx, key)
		if err != nil || !found {
			return err
		}
		p := f.Pull(&c)
		if p.Attempt != attempt || p.Done {
			return nil
		}
		ours = true
		p.Lease = time.Now().Add(PullLease)
		return sim.Save(tx, rec, c)
	})
	// A failing database does not end the fetch: its result is checked against the lease.
	return ours || err != nil
}

// resume takes up the fetch of c, read under key, if its holder stopped renewing its lease.
func (f Fetcher[C, R]) Resume(ctx context.Context, key sim.Key, c C) error {
	if p := f.Pull(&c); p.Done || time.Now().Before(p.Lease) {
		return nil
	}
	attempt := ""
	err := f.Config.State.Update(ctx, func(tx sim.Tx) error {
		attempt = ""
		c, rec, found, err := sim.LoadTx[C](tx, key)
		if err != nil || !found {
			return err
		}
		p := f.Pull(&c)
		if p.Done || time.Now().Before(p.Lease) {
			return nil
		}
		*p = NewPull(p.URL)
		attempt = p.Attempt
		return sim.Save(tx, rec, c)
	})
	if err == nil && attempt != "" {
		f.Start(key, attempt)
	}
	return err
}
