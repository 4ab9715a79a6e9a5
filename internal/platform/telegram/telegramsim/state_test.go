package telegramsim_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/clocktest"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/sim/simtest"
	"github.com/reelay/reelay/internal/platform/telegram/telegramsim"
)

// TestTelegramAcrossProcesses: a publish's calls (getMe, getChatMember, sendVideo) go to two
// processes serving the simulator from one State, each request to the other than the last,
// and a process started afterwards (a restart) posts once more. The channel's message ids go
// on from the last one whichever process posted it, and each video is received and published
// once.
func TestTelegramAcrossProcesses(t *testing.T) {
	for name, open := range simtest.States(t) {
		t.Run(name, func(t *testing.T) {
			clock := clocktest.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
			st := open(t, clock.Now)
			accounts := sim.StaticAccounts{tgToken: {ID: tgAccount, Username: "Sim channel"}}
			process := func() http.Handler {
				return telegramsim.NewSim(sim.Config{Accounts: accounts, Recorder: sim.NewRecorder(st, platform.Telegram),
					State: st, Now: clock.Now}, telegramsim.Options{})
			}
			both, restarted := simtest.Processes(t, process)

			if _, a := tgDo(t, both, tgToken, "getMe", "", nil); !a.OK {
				t.Fatalf("getMe: %+v", a)
			}
			member := fmt.Sprintf(`{"chat_id":"@%s","user_id":%d}`, tgAccount, telegramsim.BotID(tgAccount))
			if _, a := tgDo(t, both, tgToken, "getChatMember", "application/json", []byte(member)); !a.OK {
				t.Fatalf("getChatMember: %+v", a)
			}
			var links []string
			for i, srv := range []*httptest.Server{both, both, restarted} {
				ct, body := tgMultipart(t, tgPart{name: "chat_id", value: "@" + tgAccount},
					tgPart{name: "video", filename: "v.mp4", data: mp4ish(1000 + i)})
				status, a := tgDo(t, srv, tgToken, "sendVideo", ct, body)
				var msg struct {
					MessageID int64 `json:"message_id"`
				}
				if err := json.Unmarshal(a.Result, &msg); status != http.StatusOK || err != nil || msg.MessageID != int64(i+1) {
					t.Fatalf("video %d: %d %s %s, want message %d", i+1, status, a.Description, a.Result, i+1)
				}
				links = append(links, fmt.Sprintf("https://t.me/%s/%d", tgAccount, i+1))
			}
			in := sim.NewRecorder(st, platform.Telegram).Snapshot(nil)
			if len(in.Uploads) != 3 || len(in.Published) != 3 {
				t.Fatalf("received %+v, want three videos each uploaded and published once", in)
			}
			for i, p := range in.Published {
				if p.URL != links[i] || in.Uploads[i].Bytes != int64(1000+i) || p.SHA256 != in.Uploads[i].SHA256 {
					t.Errorf("video %d: uploaded %+v, published %+v", i+1, in.Uploads[i], p)
				}
			}
		})
	}
}

// TestTelegramConcurrentSends: videos sent at once to two processes get one message id each,
// the channel's next ones, none twice.
func TestTelegramConcurrentSends(t *testing.T) {
	const sends = 6
	for name, open := range simtest.States(t) {
		t.Run(name, func(t *testing.T) {
			st := open(t, nil)
			accounts := sim.StaticAccounts{tgToken: {ID: tgAccount}}
			both, _ := simtest.Processes(t, func() http.Handler {
				return telegramsim.NewSim(sim.Config{Accounts: accounts, State: st}, telegramsim.Options{})
			})
			ct, body := tgMultipart(t, tgPart{name: "chat_id", value: "@" + tgAccount}, tgPart{name: "video", filename: "v.mp4", data: mp4ish(100)})
			var ids []int64
			for _, answer := range simtest.PostAtOnce(t, both, sends, "/bot"+tgToken+"/sendVideo", "", ct, body) {
				var a struct {
					Result struct {
						MessageID int64 `json:"message_id"`
					} `json:"result"`
				}
				_ = json.Unmarshal(answer, &a)
				ids = append(ids, a.Result.MessageID)
			}
			slices.Sort(ids)
			if want := []int64{1, 2, 3, 4, 5, 6}; !slices.Equal(ids, want) {
				t.Errorf("message ids %v, want %v", ids, want)
			}
		})
	}
}

// TestTelegramStateDown: a send the simulator cannot keep is answered as the Bot API's own
// server errors are, and nothing is received.
func TestTelegramStateDown(t *testing.T) {
	st := sim.NewMemoryState(nil)
	rec := sim.NewRecorder(st, platform.Telegram)
	srv := httptest.NewServer(telegramsim.NewSim(sim.Config{Accounts: sim.StaticAccounts{tgToken: {ID: tgAccount}},
		Recorder: rec, State: simtest.DownState{State: st}}, telegramsim.Options{}))
	t.Cleanup(srv.Close)
	ct, body := tgMultipart(t, tgPart{name: "chat_id", value: "@" + tgAccount}, tgPart{name: "video", filename: "v.mp4", data: mp4ish(100)})
	if status, a := tgDo(t, srv, tgToken, "sendVideo", ct, body); status != http.StatusInternalServerError || a.Description != "Internal Server Error" {
		t.Fatalf("%d %s %s, want 500 Internal Server Error", status, a.Description, a.Result)
	}
	if in := rec.Snapshot(nil); len(in.Uploads)+len(in.Published) != 0 {
		t.Errorf("received %+v, want nothing", in)
	}
}
