package sim

// Instagram and Threads containers fetch their video_url in the background, as Meta's servers
// do: the request that creates a container answers its id at once. The fetch is made by one
// process at a time: the one that holds the container's lease, which it renews while the
// download runs. A process that finds the lease run out (its holder died) takes the fetch up
// again, so that a container created just before a crash still finishes; the result of a fetch
// that lost its lease is dropped, so a container is fetched, checked and recorded once.

import (
	"context"
	"time"
)

// The lease of a container's fetch, on the wall clock (not Config.Now, which tests move by
// hours): renewed every pullRenew while the fetch runs, it lapses pullLease after its holder
// stopped renewing it.
const (
	pullLease = 20 * time.Second
	pullRenew = pullLease / 4
)

// metaPull is the state of a container's fetch of its video_url.
type metaPull struct {
	// URL is the video's address until it is fetched, then "": it may be a signed link, a
	// credential the record keeps no longer than it needs to.
	URL string `json:"url,omitempty"`
	// Attempt names the fetch that holds Lease; Done says the fetch and the checks are over.
	Attempt string    `json:"attempt,omitempty"`
	Lease   time.Time `json:"lease,omitzero"`
	Done    bool      `json:"done,omitempty"`
}

// newPull is the fetch of url about to start.
func newPull(url string) metaPull {
	return metaPull{URL: url, Attempt: RandomHex(8), Lease: time.Now().Add(pullLease)}
}

// metaFetcher runs the fetches of one simulator's containers, records of type C.
type metaFetcher[C, R any] struct {
	cfg Config
	// pull is the container's fetch state.
	pull func(c *C) *metaPull
	// fetch downloads the video of a container (its URL in pull) and checks it; upload is what
	// arrived when the download was complete (nil otherwise), recorded with the result.
	fetch func(ctx context.Context, c C) (r R, upload *Upload)
	// apply writes a fetch's result into the container.
	apply func(c *C, r R)
	// timeout bounds one fetch.
	timeout time.Duration
}

// start runs the fetch named attempt of the container under key in the background.
func (f metaFetcher[C, R]) start(key Key, attempt string) {
	go f.run(key, attempt)
}

// run fetches, renewing the lease meanwhile, then writes the result if the lease is still its.
func (f metaFetcher[C, R]) run(key Key, attempt string) {
	ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
	defer cancel()
	c, _, found, err := Load[C](ctx, f.cfg.State, key)
	if err != nil || !found || f.pull(&c).Attempt != attempt {
		return
	}
	stop := keepRenewed(ctx, func(ctx context.Context) bool {
		if !f.renew(ctx, key, attempt) {
			cancel() // another process took the fetch over
			return false
		}
		return true
	})
	r, upload := f.fetch(ctx, c)
	stop()
	// The result is written whatever happened to the request's context: on a context of its own.
	wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer wcancel()
	_ = f.cfg.State.Update(wctx, func(tx Tx) error {
		c, rec, found, err := LoadTx[C](tx, key)
		if err != nil || !found {
			return err
		}
		p := f.pull(&c)
		if p.Attempt != attempt || p.Done {
			return nil // the fetch was taken over: its result is the other's to write
		}
		f.apply(&c, r)
		*p = metaPull{Done: true}
		if upload != nil {
			if err := RecordTx(tx, key.Platform, *upload); err != nil {
				return err
			}
		}
		return Save(tx, rec, c)
	})
}

// keepRenewed calls renew every pullRenew, until it answers false or stop is called; stop
// returns once renew no longer runs.
func keepRenewed(ctx context.Context, renew func(ctx context.Context) bool) (stop func()) {
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
func (f metaFetcher[C, R]) renew(ctx context.Context, key Key, attempt string) bool {
	ours := false
	err := f.cfg.State.Update(ctx, func(tx Tx) error {
		ours = false
		c, rec, found, err := LoadTx[C](tx, key)
		if err != nil || !found {
			return err
		}
		p := f.pull(&c)
		if p.Attempt != attempt || p.Done {
			return nil
		}
		ours = true
		p.Lease = time.Now().Add(pullLease)
		return Save(tx, rec, c)
	})
	// A failing database does not end the fetch: its result is checked against the lease.
	return ours || err != nil
}

// resume takes up the fetch of c, read under key, if its holder stopped renewing its lease.
func (f metaFetcher[C, R]) resume(ctx context.Context, key Key, c C) error {
	if p := f.pull(&c); p.Done || time.Now().Before(p.Lease) {
		return nil
	}
	attempt := ""
	err := f.cfg.State.Update(ctx, func(tx Tx) error {
		attempt = ""
		c, rec, found, err := LoadTx[C](tx, key)
		if err != nil || !found {
			return err
		}
		p := f.pull(&c)
		if p.Done || time.Now().Before(p.Lease) {
			return nil
		}
		*p = newPull(p.URL)
		attempt = p.Attempt
		return Save(tx, rec, c)
	})
	if err == nil && attempt != "" {
		f.start(key, attempt)
	}
	return err
}
