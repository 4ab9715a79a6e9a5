package store_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/reelay/reelay/internal/store"
	"github.com/reelay/reelay/internal/store/storetest"
)

// TestLoadsAsOne: a batch of reads answers each delivery exactly as the read of one
// destination does (several of one post, of posts of two accounts, one asked twice), and
// leaves to be read alone an id it does not find.
func TestLoadsAsOne(t *testing.T) {
	s := storetest.New(t, store.Postgres)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a, b := newAccount(t, s, "a"), newAccount(t, s, "b")
	later := time.Now().Add(time.Hour)
	three := newPostOn(t, s, a, "three", nil, "youtube", "tiktok", "instagram")
	other := newPostOn(t, s, b, "other", &later, "youtube")
	d := three.Destinations[1]
	if _, _, err := s.SaveStep(ctx, d.ID, d.Seq, store.StepUpdate{Status: store.DestUploading,
		State: []byte(`{"session":"s"}`), ExternalID: "x1"}); err != nil {
		t.Fatal(err)
	}
	ids := []string{three.Destinations[0].ID, other.Destinations[0].ID, uuid.NewString(),
		three.Destinations[1].ID, three.Destinations[2].ID, three.Destinations[0].ID}
	batched, alone, read := s.LoadDeliveriesAsOne(ctx, ids)
	for i, id := range ids {
		if want := i != 2; read[i] != want {
			t.Errorf("read %d (%s): read by the batch %v, want %v", i, id, read[i], want)
			continue
		}
		if !read[i] {
			continue
		}
		if !reflect.DeepEqual(batched[i], alone[i]) {
			t.Errorf("read %d (%s): the batch read\n%+v\nalone:\n%+v", i, id, batched[i], alone[i])
		}
		if batched[i].Destination.ID != id || batched[i].Post.ID != batched[i].Destination.PostID ||
			batched[i].Channel.ID != batched[i].Destination.ChannelID || batched[i].Video.SHA256 != batched[i].Post.VideoSHA256 {
			t.Errorf("read %d (%s): parts of other deliveries: %+v", i, id, batched[i])
		}
	}
	if got := batched[3].Destination; got.ExternalID != "x1" || got.Status != store.DestUploading {
		t.Errorf("the destination that took a step: %+v", got)
	}
}
