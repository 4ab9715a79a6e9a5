package publish

import (
	"cmp"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reelay/reelay/internal/store"
)

// Hub tells waiting requests that a post changed, so that POST /publish answers as soon as
// its destinations settle: the worker notifies it when it runs in the same process, and on
// PostgreSQL so does the process's listener (store.ListenPostSettled) when the worker runs in
// another. Wait polls the post besides, rarely while the listener listens.
type Hub struct {
	mu      sync.Mutex
	waiters map[string][]chan struct{}
	// listening: the process hears posts settled by other processes.
	listening atomic.Bool
}

// SetListening records whether the process hears posts settled by other processes.
func (h *Hub) SetListening(on bool) { h.listening.Store(on) }

// Listening reports whether the process hears posts settled by other processes.
func (h *Hub) Listening() bool { return h.listening.Load() }

// NewHub returns an empty hub.
func NewHub() *Hub { return &Hub{waiters: map[string][]chan struct{}{}} }

// Notify wakes everyone waiting on postID.
func (h *Hub) Notify(postID string) {
	h.mu.Lock()
	chans := h.waiters[postID]
	delete(h.waiters, postID)
	h.mu.Unlock()
	for _, c := range chans {
		close(c)
	}
}

// watch returns a channel closed at the next Notify of postID.
func (h *Hub) watch(postID string) <-chan struct{} {
	c := make(chan struct{})
	h.mu.Lock()
	h.waiters[postID] = append(h.waiters[postID], c)
	h.mu.Unlock()
	return c
}

// forget drops a waiter that stopped waiting.
func (h *Hub) forget(postID string, c <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	list := h.waiters[postID]
	for i, x := range list {
		if x == c {
			h.waiters[postID] = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(h.waiters[postID]) == 0 {
		delete(h.waiters, postID)
	}
}

// waitPoll is how often Wait reads the post when no notification comes, while the process
// does not hear other processes' workers; with a listener, Service.ListeningPoll.
const waitPoll = 200 * time.Millisecond

// defaultListeningPoll is Service.ListeningPoll's default: what a notification missed while
// the listener reconnects costs at most.
const defaultListeningPoll = 2 * time.Second

// Wait waits until the post is no longer processing, for at most d, and returns the post as it
// then is. A scheduled post returns at once.
func (s *Service) Wait(ctx context.Context, accountID, postID string, d time.Duration) (store.Post, error) {
	deadline := time.Now().Add(d)
	for {
		var woke <-chan struct{}
		if s.Hub != nil {
			woke = s.Hub.watch(postID)
		}
		status, err := s.Store.PostStatus(ctx, postID)
		if err != nil {
			s.forgetWatch(postID, woke)
			return store.Post{}, err
		}
		left := time.Until(deadline)
		if status != store.PostProcessing || left <= 0 {
			s.forgetWatch(postID, woke)
			return s.Store.GetPost(ctx, accountID, postID)
		}
		poll := waitPoll
		if s.Hub != nil && s.Hub.Listening() {
			poll = cmp.Or(s.ListeningPoll, defaultListeningPoll)
		}
		timer := time.NewTimer(min(left, poll))
		select {
		case <-ctx.Done():
			timer.Stop()
			s.forgetWatch(postID, woke)
			if errors.Is(ctx.Err(), context.Canceled) {
				return store.Post{}, ctx.Err()
			}
			return s.Store.GetPost(context.WithoutCancel(ctx), accountID, postID)
		case <-woke:
		case <-timer.C:
			s.forgetWatch(postID, woke)
		}
		timer.Stop()
	}
}

func (s *Service) forgetWatch(postID string, c <-chan struct{}) {
	if s.Hub != nil && c != nil {
		s.Hub.forget(postID, c)
	}
}
