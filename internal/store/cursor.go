package store

import (
	"encoding/base64"
	"strings"
	"time"

	"github.com/reelay/reelay/internal/apierr"
)

// Listings are paged by keyset: each page ends at a row's (time, id), and the next page starts
// after it. The cursor handed to clients is that key, opaque to them.

// Page cuts a listing read with limit+1 rows (one more tells whether there is a next page) to
// limit, and answers the cursor of the next page (nil on the last), from the last row's key.
func Page[T any](rows []T, limit int, key func(T) (time.Time, string)) ([]T, *string) {
	if len(rows) <= limit {
		return rows, nil
	}
	rows = rows[:limit]
	c := EncodeCursor(key(rows[limit-1]))
	return rows, &c
}

// EncodeCursor is the opaque cursor of the key (t, id).
func EncodeCursor(t time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(t.UTC().Format(time.RFC3339Nano) + "|" + id))
}

// DecodeCursor reads a cursor EncodeCursor made; ok is false for anything else.
func DecodeCursor(c string) (t time.Time, id string, ok bool) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return time.Time{}, "", false
	}
	ts, id, ok := strings.Cut(string(raw), "|")
	t, err = time.Parse(time.RFC3339Nano, ts)
	if !ok || err != nil || !ValidID(id) {
		return time.Time{}, "", false
	}
	return t, id, true
}

// cursorRefusal is what every listing says of a cursor it did not hand out, through either
// front door: written here, beside the only code that makes and reads cursors.
const cursorRefusal = "is not a cursor this server handed out"

// ReadCursor reads a listing's cursor parameter: where the previous page ended, nil for ""
// (the first page). A cursor EncodeCursor did not make is refused in f under "cursor".
func ReadCursor(f *apierr.Fields, c string) (afterTime *time.Time, afterID string) {
	if c == "" {
		return nil, ""
	}
	t, id, ok := DecodeCursor(c)
	if !ok {
		f.Add("cursor", cursorRefusal)
		return nil, ""
	}
	return &t, id
}

// CursorRefused is the refusal of a cursor for a listing with cursors of another shape (the
// credit ledger's), in the same words as ReadCursor's.
func CursorRefused() *apierr.Error {
	return apierr.Field("cursor", cursorRefusal)
}
