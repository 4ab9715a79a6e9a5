package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// newAIJob reserves credits and records a running job in one transaction, as the API does.
func newAIJob(t *testing.T, s *store.Store, accountID string, credits int64, key []byte) store.AIJob {
	t.Helper()
	var j store.AIJob
	err := s.InTx(context.Background(), func(tx *store.Tx) error {
		r, err := tx.ReserveCredits(context.Background(), accountID, credits, "generate video")
		if err != nil {
			return err
		}
		j, err = tx.CreateAIJob(context.Background(), store.AIJob{ID: uuid.NewString(), AccountID: accountID,
			Kind: store.AIJobGenerateVideo, Input: json.RawMessage(`{"prompt":"p"}`), ProviderKey: key,
			ReservationID: r.ID, Credits: credits})
		return err
	})
	if err != nil {
		t.Fatalf("create AI job: %v", err)
	}
	return j
}

func TestAIJobs(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		acct := newCreditAccount(t, s, 10)
		other := newCreditAccount(t, s, 10)

		ok := newAIJob(t, s, acct, 3, []byte("sealed key"))
		if balance(t, s, acct) != 7 {
			t.Fatalf("balance after reserving 3 of 10: %d", balance(t, s, acct))
		}
		got, err := s.GetAIJob(ctx, acct, ok.ID)
		if err != nil || got.Status != store.AIJobRunning || string(got.ProviderKey) != "sealed key" || string(got.Progress) != "{}" {
			t.Fatalf("GetAIJob = %+v, %v", got, err)
		}
		if _, err := s.GetAIJob(ctx, other, ok.ID); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another account's job: %v, want ErrNotFound", err)
		}

		if err := s.SaveAIJobProgress(ctx, ok.ID, json.RawMessage(`{"provider":{"request_id":"r1"}}`)); err != nil {
			t.Fatal(err)
		}
		ended, err := s.FinishAIJob(ctx, ok.ID, json.RawMessage(`{"video_key":"k"}`), nil, "")
		if err != nil || !ended {
			t.Fatalf("FinishAIJob = %v, %v", ended, err)
		}
		got, _ = s.AIJobByID(ctx, ok.ID)
		if got.Status != store.AIJobSucceeded || got.ProviderKey != nil || string(got.Result) != `{"video_key":"k"}` ||
			got.FinishedAt == nil || string(got.Progress) != `{"provider":{"request_id":"r1"}}` {
			t.Errorf("succeeded job = %+v", got)
		}
		if r, _ := s.GetReservation(ctx, ok.ReservationID); r.Status != store.ReservationSettled {
			t.Errorf("reservation %s, want settled", r.Status)
		}
		// A second finish (a retried worker) changes nothing, whichever way it goes.
		if ended, err := s.FinishAIJob(ctx, ok.ID, nil, json.RawMessage(`{"code":"x"}`), "late"); ended || err != nil {
			t.Errorf("failing a succeeded job: ended %v, err %v; want nothing changed", ended, err)
		}
		if r, _ := s.GetReservation(ctx, ok.ReservationID); r.Status != store.ReservationSettled || balance(t, s, acct) != 7 {
			t.Errorf("failing a succeeded job moved credits: reservation %s, balance %d", r.Status, balance(t, s, acct))
		}
		if ended, err := s.FinishAIJob(ctx, ok.ID, json.RawMessage(`{}`), nil, ""); ended || err != nil {
			t.Errorf("finishing a succeeded job again: %v, %v", ended, err)
		}
		if err := s.SaveAIJobProgress(ctx, ok.ID, json.RawMessage(`{"x":1}`)); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.AIJobByID(ctx, ok.ID); string(got.Result) != `{"video_key":"k"}` || string(got.Progress) != `{"provider":{"request_id":"r1"}}` {
			t.Errorf("an ended job changed: %+v", got)
		}

		bad := newAIJob(t, s, acct, 4, nil)
		if balance(t, s, acct) != 3 {
			t.Fatalf("balance after reserving 4 more: %d", balance(t, s, acct))
		}
		if ended, err := s.FinishAIJob(ctx, bad.ID, nil, json.RawMessage(`{"status":502,"code":"upstream_error"}`), "provider failed"); !ended || err != nil {
			t.Fatalf("FinishAIJob(fail) = %v, %v", ended, err)
		}
		got, _ = s.AIJobByID(ctx, bad.ID)
		if got.Status != store.AIJobFailed || got.Result != nil || string(got.Error) != `{"status":502,"code":"upstream_error"}` {
			t.Errorf("failed job = %+v", got)
		}
		if balance(t, s, acct) != 7 {
			t.Errorf("balance after the refund: %d, want 7", balance(t, s, acct))
		}
		es := checkLedger(t, s, acct)
		if last := es[len(es)-1]; last.Kind != store.CreditRefund || last.Reason != "provider failed" || last.Delta != 4 {
			t.Errorf("last ledger row = %+v, want the refund of 4", last)
		}

		running := newAIJob(t, s, acct, 1, nil)
		if ids, err := s.StaleAIJobs(ctx, time.Now().Add(time.Hour)); err != nil || !slices.Equal(ids, []string{running.ID}) {
			t.Errorf("StaleAIJobs(in an hour) = %v, %v; want only the running job %s", ids, err, running.ID)
		}
		if ids, err := s.StaleAIJobs(ctx, time.Now().Add(-time.Hour)); err != nil || len(ids) != 0 {
			t.Errorf("StaleAIJobs(an hour ago) = %v, %v; want none", ids, err)
		}

		if _, err := s.FinishAIJob(ctx, uuid.NewString(), json.RawMessage(`{}`), nil, ""); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("finishing an unknown job: %v", err)
		}
	})
}
