package discordsim_test

import (
	"testing"

	"github.com/reelay/reelay/internal/platform/discord/discordsim"
	"github.com/reelay/reelay/internal/platform/sim/simtest"
)

func FuzzDiscordSim(f *testing.F) {
	const account = "sbx_99aa11bb22cc33dd"
	channel := discordsim.ChannelID(account)
	payload := `{"content":"hi","username":"u","attachments":[{"id":0,"filename":"v.mp4","description":"d"}],"flags":4}`
	withFile := "--fz\r\nContent-Disposition: form-data; name=\"payload_json\"\r\nContent-Type: application/json\r\n\r\n" + payload +
		"\r\n--fz\r\nContent-Disposition: form-data; name=\"files[0]\"; filename=\"v.mp4\"\r\nContent-Type: video/mp4\r\n\r\n0123456789\r\n--fz--\r\n"
	simtest.Fuzz{NewSim: discordsim.New, Account: account, Seeds: []simtest.FuzzSeed{
		{"POST", "/api/v10/webhooks/" + account + "/tok?wait=true", simtest.FuzzMultipartType, withFile},
		{"POST", "/api/webhooks/" + account + "/tok?wait=maybe&thread_id=x", "Content-Type: application/json", `{"content":"hi","embeds":[{}]}`},
		{"GET", "/api/webhooks/" + account + "/tok", "", ""},
		{"POST", "/api/v10/channels/" + channel + "/messages", "Authorization: Bot tok\n" + simtest.FuzzMultipartType, withFile},
		{"POST", "/api/v10/channels/" + channel + "/messages", "Authorization: Bot tok\nContent-Type: application/json", `{"content":"","attachments":[]}`},
		{"GET", "/api/v10/channels/" + channel + "/messages?limit=500&before=x", "Authorization: Bot tok", ""},
		{"GET", "/api/v10/channels/" + channel, "Authorization: Bot tok", ""},
		{"GET", "/api/v10/users/@me", "Authorization: Bot tok", ""},
	}}.Run(f)
}
