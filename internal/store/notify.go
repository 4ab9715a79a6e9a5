package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// postSettledChannel is the PostgreSQL notification channel on which the transaction that
// changes a post's status once it fired names it (setPostStatus). A request waiting for a post
// (POST /publish's wait) is in an API process, and the worker that settles the post may run in
// another: the notification, sent at commit, tells every process at once, where polling the
// post would take a round trip per waiting request per poll. Channels are database-wide, so
// processes in other schemas of the same database hear ids they do not know, and ignore them.
const postSettledChannel = "reelay_post_settled"

// ListenPostSettled calls settled with the id of every post any process settles, until ctx
// ends, on a connection of its own. state is called with nil each time the connection
// listens, and with the error each time connecting failed or the connection broke:
// notifications sent until the next nil are missed, and callers must read the posts
// meanwhile. It reconnects after a pause that grows from 1 s to 30 s. On SQLite it returns at
// once.
func (s *Store) ListenPostSettled(ctx context.Context, settled func(postID string), state func(error)) {
	if s.dialect != Postgres {
		return
	}
	pause := time.Second
	for {
		err := s.listen(ctx, settled, func() { pause = time.Second; state(nil) })
		if ctx.Err() != nil {
			return
		}
		state(err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, 30*time.Second)
	}
}

// listen runs one connection's LISTEN until it fails or ctx ends.
func (s *Store) listen(ctx context.Context, settled func(postID string), listening func()) error {
	conn, err := pgx.ConnectConfig(ctx, s.pgPool.Config().ConnConfig.Copy())
	if err != nil {
		return fmt.Errorf("store: listen: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+postSettledChannel); err != nil {
		return fmt.Errorf("store: listen: %w", err)
	}
	s.listenerPID.Store(conn.PgConn().PID())
	listening()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("store: listen: %w", err)
		}
		settled(n.Payload)
	}
}
