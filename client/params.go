package client

import (
	"context"
	"fmt"
	"iter"
	"net/url"
	"reflect"
	"strconv"
	"time"
)

// Platform is a platform identifier.
type Platform string

// The twelve platforms.
const (
	YouTube   Platform = "youtube"
	Instagram Platform = "instagram"
	TikTok    Platform = "tiktok"
	LinkedIn  Platform = "linkedin"
	Pinterest Platform = "pinterest"
	Threads   Platform = "threads"
	Facebook  Platform = "facebook"
	Bluesky   Platform = "bluesky"
	Telegram  Platform = "telegram"
	Discord   Platform = "discord"
	Mastodon  Platform = "mastodon"
	Reddit    Platform = "reddit"
)

// Platforms lists every platform, in the contract's order.
var Platforms = []Platform{YouTube, Instagram, TikTok, LinkedIn, Pinterest, Threads, Facebook, Bluesky,
	Telegram, Discord, Mastodon, Reddit}

// ListParams pages through a listing: Limit items a page (1 to 100; 0: the server's 20),
// starting after Cursor (a previous page's NextCursor; empty: the first page).
type ListParams struct {
	Limit  int    `query:"limit"`
	Cursor string `query:"cursor"`
}

// encodeQuery turns a parameter struct into a query: each field tagged `query:"name"` that is
// set (a non-empty string, a positive number, true, a non-zero time); embedded structs are
// flattened. The contract test checks every name against the operation's parameters.
func encodeQuery(params any) url.Values {
	q := url.Values{}
	if params == nil {
		return q
	}
	v := reflect.ValueOf(params)
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return q
		}
		v = v.Elem()
	}
	addQuery(q, v)
	return q
}

func addQuery(q url.Values, v reflect.Value) {
	t := v.Type()
	for i := range t.NumField() {
		sf, fv := t.Field(i), v.Field(i)
		name := sf.Tag.Get("query")
		if sf.Anonymous && name == "" {
			addQuery(q, fv)
			continue
		}
		if name == "" || name == "-" {
			continue
		}
		switch x := fv.Interface().(type) {
		case time.Time:
			if !x.IsZero() {
				q.Set(name, x.Format(time.RFC3339))
			}
			continue
		}
		switch fv.Kind() {
		case reflect.String:
			if s := fv.String(); s != "" {
				q.Set(name, s)
			}
		case reflect.Int, reflect.Int64:
			if n := fv.Int(); n > 0 {
				q.Set(name, strconv.FormatInt(n, 10))
			}
		case reflect.Bool:
			if fv.Bool() {
				q.Set(name, "true")
			}
		default:
			panic(fmt.Sprintf("client: query field %s has unsupported type %s", sf.Name, sf.Type))
		}
	}
}

// pages walks a paginated listing from its first page, one item at a time, fetching the next
// page when the previous one is used up. It stops at the first error, which it yields.
func pages[T any](ctx context.Context, cursor string, fetch func(ctx context.Context, cursor string) ([]T, string, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		seen := map[string]bool{}
		for {
			items, next, err := fetch(ctx, cursor)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if next == "" {
				return
			}
			// A server handing out the same cursor twice would loop forever.
			if seen[next] {
				var zero T
				yield(zero, fmt.Errorf("reelay: the server answered cursor %q twice", next))
				return
			}
			seen[next] = true
			cursor = next
		}
	}
}
