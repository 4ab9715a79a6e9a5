package discordsim_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/clocktest"
	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/discord/discordsim"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/sim/simtest"
)

// TestDiscordAcrossProcesses: two processes serve the simulator from one State, each request
// going to the other than the last. A webhook's message and a bot's, whose nonce is then sent
// again at the other process, make two messages, with increasing ids; a process started
// afterwards (a restart) lists both, still answers the nonce with the bot's message until the
// nonce window ends, then makes a new one. Each message is published once, and every file
// received is recorded.
func TestDiscordAcrossProcesses(t *testing.T) {
	for name, open := range simtest.States(t) {
		t.Run(name, func(t *testing.T) {
			clock := clocktest.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
			st := open(t, clock.Now)
			a := sim.Account{ID: dcAccount, Username: "Hook"}
			process := func() http.Handler {
				return discordsim.NewSim(sim.Config{Accounts: sim.StaticAccounts{dcHookToken: a, dcBotToken: a},
					Recorder: sim.NewRecorder(st, platform.Discord), State: st, Now: clock.Now}, discordsim.Options{})
			}
			both, restarted := simtest.Processes(t, process)

			if status, _, w := dcDo(t, both, http.MethodGet, hookPath, "", "", nil); status != http.StatusOK || w["id"] != dcAccount {
				t.Fatalf("GET webhook: %d %v", status, w)
			}
			ct, body := dcBody(dcPart{name: "payload_json", value: `{"content":"by webhook","attachments":[{"id":0,"filename":"a.mp4"}]}`},
				dcPart{name: "files[0]", filename: "a.mp4", data: []byte("first video")})
			status, _, hooked := dcDo(t, both, http.MethodPost, hookPath+"?wait=true", "", ct, body)
			if status != http.StatusOK {
				t.Fatalf("execute webhook: %d %v", status, hooked)
			}
			messages := "/api/v10/channels/" + discordsim.ChannelID(dcAccount) + "/messages"
			send := func(srv *httptest.Server) map[string]any {
				t.Helper()
				ct, body := dcBody(dcPart{name: "payload_json", value: `{"content":"by bot","nonce":"n-1","enforce_nonce":true,"attachments":[{"id":0,"filename":"b.mp4"}]}`},
					dcPart{name: "files[0]", filename: "b.mp4", data: []byte("second video")})
				status, _, m := dcDo(t, srv, http.MethodPost, messages, "Bot "+dcBotToken, ct, body)
				if status != http.StatusOK {
					t.Fatalf("create message: %d %v", status, m)
				}
				return m
			}
			bot := send(both)
			if again := send(both); again["id"] != bot["id"] {
				t.Fatalf("the nonce sent again at the other process made message %v, want %v", again["id"], bot["id"])
			}
			if dcSnowflake(t, bot["id"]) <= dcSnowflake(t, hooked["id"]) || dcSnowflake(t, dcFirstAttachment(bot)) <= dcSnowflake(t, bot["id"]) {
				t.Errorf("ids do not increase: webhook's message %v, bot's %v, its attachment %v", hooked["id"], bot["id"], dcFirstAttachment(bot))
			}

			_, _, list := dcDo(t, restarted, http.MethodGet, messages, "Bot "+dcBotToken, "", nil)
			var history []map[string]any
			if err := json.Unmarshal([]byte(list["_list"].(string)), &history); err != nil {
				t.Fatal(err)
			}
			var ids []any
			for _, m := range history {
				ids = append(ids, m["id"])
			}
			if !slices.Equal(ids, []any{bot["id"], hooked["id"]}) || history[0]["nonce"] != "n-1" || dcFirstAttachment(history[1]) != dcFirstAttachment(hooked) {
				t.Errorf("after a restart the channel holds %v, want the bot's message then the webhook's", history)
			}
			clock.Advance(4 * time.Minute)
			if again := send(restarted); again["id"] != bot["id"] {
				t.Errorf("within the nonce window, after a restart: message %v, want %v", again["id"], bot["id"])
			}
			clock.Advance(time.Minute)
			late := send(restarted)
			if late["id"] == bot["id"] || dcSnowflake(t, late["id"]) <= dcSnowflake(t, dcFirstAttachment(bot)) {
				t.Errorf("past the nonce window: message %v after %v", late["id"], bot["id"])
			}

			in := sim.NewRecorder(st, platform.Discord).Snapshot(nil)
			var published []string
			for _, p := range in.Published {
				published = append(published, p.ID)
			}
			if len(in.Uploads) != 5 || !slices.Equal(published, []string{hooked["id"].(string), bot["id"].(string), late["id"].(string)}) {
				t.Errorf("received %+v, want 5 files and 3 messages", in)
			}
		})
	}
}

// dcSnowflake reads a snowflake.
func dcSnowflake(t *testing.T, v any) uint64 {
	t.Helper()
	s, _ := v.(string)
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("snowflake %v: %v", v, err)
	}
	return n
}

// dcFirstAttachment is the id of a message's first attachment.
func dcFirstAttachment(m map[string]any) any {
	atts, _ := m["attachments"].([]any)
	if len(atts) == 0 {
		return nil
	}
	return atts[0].(map[string]any)["id"]
}

// TestDiscordConcurrentNonce: one nonce sent at once to two processes makes one message, the
// answer to every send.
func TestDiscordConcurrentNonce(t *testing.T) {
	const sends = 4
	for name, open := range simtest.States(t) {
		t.Run(name, func(t *testing.T) {
			st := open(t, nil)
			accounts := sim.StaticAccounts{dcBotToken: {ID: dcAccount}}
			both, _ := simtest.Processes(t, func() http.Handler {
				return discordsim.NewSim(sim.Config{Accounts: accounts, Recorder: sim.NewRecorder(st, platform.Discord), State: st},
					discordsim.Options{})
			})
			ct, body := dcBody(dcPart{name: "payload_json", value: `{"content":"once","nonce":"n-2","enforce_nonce":true}`})
			var ids []any
			for _, answer := range simtest.PostAtOnce(t, both, sends, "/api/v10/channels/"+discordsim.ChannelID(dcAccount)+"/messages", "Bot "+dcBotToken, ct, body) {
				var m map[string]any
				_ = json.Unmarshal(answer, &m)
				ids = append(ids, m["id"])
			}
			if ids[0] == nil || slices.ContainsFunc(ids, func(v any) bool { return v != ids[0] }) {
				t.Errorf("answers %v, want one message", ids)
			}
			if in := sim.NewRecorder(st, platform.Discord).Snapshot(nil); len(in.Published) != 1 {
				t.Errorf("published %+v, want one message", in.Published)
			}
		})
	}
}

// TestDiscordStateDown: a message the simulator cannot keep is answered as Discord's own server
// errors are, and nothing is received.
func TestDiscordStateDown(t *testing.T) {
	st := sim.NewMemoryState(nil)
	rec := sim.NewRecorder(st, platform.Discord)
	srv := httptest.NewServer(discordsim.NewSim(sim.Config{Accounts: sim.StaticAccounts{dcHookToken: {ID: dcAccount}},
		Recorder: rec, State: simtest.DownState{State: st}}, discordsim.Options{}))
	t.Cleanup(srv.Close)
	ct, body := dcBody(dcPart{name: "files[0]", filename: "v.mp4", data: []byte("video")})
	if status, _, m := dcDo(t, srv, http.MethodPost, hookPath+"?wait=true", "", ct, body); status != http.StatusInternalServerError ||
		m["message"] != "500: Internal Server Error" {
		t.Fatalf("%d %v, want 500", status, m)
	}
	if in := rec.Snapshot(nil); len(in.Uploads)+len(in.Published) != 0 {
		t.Errorf("received %+v, want nothing", in)
	}
}
