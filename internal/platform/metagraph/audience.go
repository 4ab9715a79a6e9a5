package metagraph

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/reelay/reelay/internal/provider"
)

// What the Meta providers share of reading figures and comments: the insights edges
// (Instagram's /{media-id}/insights, Threads' /{media-id}/insights, Facebook's
// /{video-id}/video_insights) all answer data[{name, period, values[{value}], title,
// description, id}] and are read item by item the same way, every comment listing is a Graph
// list edge paged by cursor, and a reply just posted is read back by its id.

// Insights reads GET path?metric=metrics and answers the latest value of each metric Graph
// gave, by name. A metric Graph left out is absent from the map: Instagram answers an empty
// set, not zeros, for figures it does not have yet.
func (c Client) Insights(ctx context.Context, path string, metrics []string) (map[string]json.RawMessage, error) {
	var res struct {
		Data []struct {
			Name   string `json:"name"`
			Values []struct {
				Value json.RawMessage `json:"value"`
			} `json:"values"`
		} `json:"data"`
	}
	if err := c.Get(ctx, path, url.Values{"metric": {strings.Join(metrics, ",")}}, &res); err != nil {
		return nil, err
	}
	out := make(map[string]json.RawMessage, len(res.Data))
	for _, row := range res.Data {
		if n := len(row.Values); n > 0 && len(row.Values[n-1].Value) > 0 && string(row.Values[n-1].Value) != "null" {
			out[row.Name] = row.Values[n-1].Value
		}
	}
	return out, nil
}

// Metrics reads the figures of each of itemIDs, one item's insights at a time: insights reads
// them (Client.Insights with the platform's edge and metrics) and figures makes the item's
// figures of them. An item Graph does not show (NotFound: deleted, or another account's) or
// has no figures for yet (an empty set) is left out. The first other failure ends the reads:
// it is answered classified, with the figures read before it.
func Metrics(ctx context.Context, itemIDs []string, insights func(ctx context.Context, id string) (map[string]json.RawMessage, error),
	classify func(error) *provider.Error, figures func(vals map[string]json.RawMessage) provider.Metrics) (map[string]provider.Metrics, error) {
	out := make(map[string]provider.Metrics, len(itemIDs))
	for _, id := range itemIDs {
		vals, err := insights(ctx, id)
		if NotFound(err) {
			continue
		}
		if err != nil {
			return out, classify(err)
		}
		if len(vals) == 0 {
			continue
		}
		out[id] = figures(vals)
	}
	return out, nil
}

// Counts sets each of fields to the count of the metric its key names, where Graph gave it as
// a number; the others are left as they are.
func Counts(vals map[string]json.RawMessage, fields map[string]**int64) {
	for name, field := range fields {
		if n, ok := Count(vals[name]); ok {
			*field = provider.N(n)
		}
	}
}

// Count reads a metric whose value is a number; ok is false when the metric is absent or
// not a number.
func Count(v json.RawMessage) (n int64, ok bool) {
	if len(v) == 0 {
		return 0, false
	}
	var f json.Number
	if json.Unmarshal(v, &f) != nil {
		return 0, false
	}
	if i, err := f.Int64(); err == nil {
		return i, true
	}
	x, err := f.Float64()
	return int64(x), err == nil
}

// Breakdown reads a metric whose value is an object of counts ({"REACTION_LIKE": 3, ...});
// ok is false when the metric is absent or not such an object. Graph leaves out the keys
// whose count is zero, so a missing key reads as 0.
func Breakdown(v json.RawMessage) (counts map[string]int64, ok bool) {
	if len(v) == 0 {
		return nil, false
	}
	var raw map[string]json.Number
	if json.Unmarshal(v, &raw) != nil || raw == nil {
		return nil, false
	}
	counts = make(map[string]int64, len(raw))
	for k, n := range raw {
		if c, ok := Count(json.RawMessage(n)); ok {
			counts[k] = c
		}
	}
	return counts, true
}

// NotFound reports whether err is Graph's answer for an object that does not exist or that
// the token cannot see (code 100, subcode 33): a deleted item, or another account's.
func NotFound(err error) bool {
	code, sub, ok := Code(err)
	return ok && code == CodeInvalidParameter && sub == 33
}

// List reads a Graph list edge, GET path?q, and its following pages while Graph says more
// follow (paging.next, with an "after" cursor), in at most maxCalls calls. Rows read before a
// failed call are answered with its error.
func List[T any](ctx context.Context, c Client, path string, q url.Values, maxCalls int) ([]T, error) {
	q = cloneValues(q)
	var rows []T
	for range maxCalls {
		var page struct {
			Data   []T `json:"data"`
			Paging struct {
				Cursors struct {
					After string `json:"after"`
				} `json:"cursors"`
				Next string `json:"next"`
			} `json:"paging"`
		}
		if err := c.Get(ctx, path, q, &page); err != nil {
			return rows, err
		}
		rows = append(rows, page.Data...)
		if page.Paging.Next == "" || page.Paging.Cursors.After == "" {
			break
		}
		q.Set("after", page.Paging.Cursors.After)
	}
	return rows, nil
}

func cloneValues(q url.Values) url.Values {
	out := make(url.Values, len(q)+1)
	for k, v := range q {
		out[k] = append([]string(nil), v...)
	}
	return out
}

// ReadBack answers a reply just posted as Graph stored it (its author, its time): GET
// /{sent.ID}?fields=fields, made a comment by comment, the channel's own, with sent's time when
// Graph gave none. When the read fails the reply is posted all the same, and sent is answered.
func ReadBack[T any](ctx context.Context, g Client, sent provider.Comment, fields string, comment func(T) provider.Comment) provider.Comment {
	var stored T
	if g.Get(ctx, "/"+url.PathEscape(sent.ID), url.Values{"fields": {fields}}, &stored) != nil {
		return sent
	}
	c := comment(stored)
	c.Own = true
	if c.CreatedAt.IsZero() {
		c.CreatedAt = sent.CreatedAt
	}
	return c
}
