package store

import (
	"context"
	"errors"
)

// Every job starts by reading its delivery (LoadDelivery), a join of five tables that
// PostgreSQL plans afresh at each execution: in a burst of 1,000 two-destination posts,
// planning the 2,000 reads took the database server about 0.2 ms each, twice what running
// them did (pg_stat_statements). deliveryLoads makes the reads that arrive together one
// statement (see batcher): one plan and one round trip for all of them.
type deliveryLoads = batcher[*loadCall]

// loadCall is one job's read, and what became of it: read, or left to its caller to make
// alone.
type loadCall struct {
	callState
	id string
	dl Delivery
}

// maxLoads bounds a batch's statement.
const maxLoads = 64

// loadDeliveryBatched reads a delivery (without its thumbnail) on PostgreSQL, sharing a
// statement with the reads of other jobs made at the same moment.
func (s *Store) loadDeliveryBatched(ctx context.Context, id string) (Delivery, error) {
	c := &loadCall{callState: callState{ctx: ctx}, id: id}
	s.loads.do(c, maxLoads, s.runLoads)
	if !c.alone {
		return c.dl, nil
	}
	if err := ctx.Err(); err != nil {
		return Delivery{}, err
	}
	return s.loadDelivery(ctx, id)
}

// runLoads reads a batch's deliveries in one statement. The reads it does not answer (a
// destination deleted, or an id not in the form the database writes it) are made alone, as is
// every read when the statement fails, so that each learns its own error.
func (s *Store) runLoads(batch []*loadCall) {
	live := liveCalls(batch)
	if len(live) == 0 {
		return
	}
	ids := make([]string, len(live))
	for i, c := range live {
		ids[i] = c.id
	}
	ctx, cancel := context.WithTimeout(context.Background(), openStepsTimeout)
	defer cancel()
	rows, err := s.read.QueryContext(ctx, deliveryQuery("d.id = ANY($1::uuid[])"), ids)
	if err != nil {
		return
	}
	read := make(map[string]Delivery, len(live))
	for rows.Next() {
		dl, err := scanDelivery(rows)
		if err != nil {
			rows.Close()
			return
		}
		read[dl.Destination.ID] = dl
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return
	}
	for _, c := range live {
		if dl, ok := read[c.id]; ok {
			c.dl, c.alone = dl, false
		}
	}
}
