package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/reelay/reelay/internal/aivideo"
	"github.com/reelay/reelay/internal/connect"
	"github.com/reelay/reelay/internal/publish"
	"github.com/reelay/reelay/internal/secret"
	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/webhooks"
)

// ResealCount is what Reseal did with one kind of sealed value.
type ResealCount struct {
	Kind store.SealedKind `json:"kind"`
	// Resealed were sealed under a previous key and now are under the current one; Current
	// already were. Changed were rewritten by another process between the read and the write
	// and were left to it (a second run checks them).
	Resealed int `json:"resealed"`
	Current  int `json:"current"`
	Changed  int `json:"changed"`
	// Unopened are the rows that no key opens: their values stay as they are, and fail as
	// before (a channel to connect again, a webhook to make again).
	Unopened []string `json:"unopened"`
}

// sealedAD is the associated data each kind of value was sealed with, by the package that
// sealed it.
func sealedAD(kind store.SealedKind, v store.SealedValue) []byte {
	switch kind {
	case store.SealedChannelCredentials:
		return publish.CredentialsAD(store.Channel{ProjectID: v.ProjectID, Platform: v.Platform, ExternalAccountID: v.ExternalAccountID})
	case store.SealedWebhookSecrets:
		return webhooks.SecretAD(v.ID)
	case store.SealedOAuthVerifiers:
		return connect.StateAD(v.ID)
	case store.SealedAIJobKeys:
		return aivideo.KeyContext(v.ID)
	}
	panic("app: no associated data for sealed kind " + string(kind))
}

// Reseal moves every sealed value in the database to box's current key, batch rows at a time
// with no transaction held between batches. A value the current key opens is left alone, so a
// second run, or one after an interrupted run, only does what is left. Each value is replaced
// only if the row still holds what was read.
func Reseal(ctx context.Context, st *store.Store, box *secret.Box, batch int) ([]ResealCount, error) {
	if batch <= 0 {
		return nil, errors.New("reseal: batch must be positive")
	}
	var counts []ResealCount
	for _, kind := range store.SealedKinds {
		c := ResealCount{Kind: kind, Unopened: []string{}}
		after := ""
		for {
			values, err := st.SealedValues(ctx, kind, after, batch)
			if err != nil {
				return counts, err
			}
			for _, v := range values {
				next, resealed, err := box.Reseal(v.Value, sealedAD(kind, v))
				switch {
				case errors.Is(err, secret.ErrOpen):
					c.Unopened = append(c.Unopened, v.ID)
				case err != nil:
					return counts, fmt.Errorf("reseal %s %s: %w", kind, v.ID, err)
				case !resealed:
					c.Current++
				default:
					replaced, err := st.ReplaceSealed(ctx, kind, v.ID, v.Value, next)
					if err != nil {
						return counts, err
					}
					if replaced {
						c.Resealed++
					} else {
						c.Changed++
					}
				}
			}
			if len(values) < batch {
				break
			}
			after = values[len(values)-1].ID
		}
		counts = append(counts, c)
	}
	return counts, nil
}
