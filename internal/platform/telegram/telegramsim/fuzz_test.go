package telegramsim_test

import (
	"strconv"
	"testing"

	"github.com/reelay/reelay/internal/platform/sim/simtest"
	"github.com/reelay/reelay/internal/platform/telegram/telegramsim"
)

func FuzzTelegramSim(f *testing.F) {
	const account = "sbx_00aa11bb22cc33dd"
	chat := strconv.FormatInt(telegramsim.ChatID(account), 10)
	simtest.Fuzz{NewSim: telegramsim.New, Account: account, Seeds: []simtest.FuzzSeed{
		{"POST", "/bottok/sendVideo", simtest.FuzzMultipartType, simtest.FuzzMultipart("video", "chat_id", chat, "caption", "<b>hi</b>", "parse_mode", "HTML", "supports_streaming", "true", "width", "-1")},
		{"POST", "/bottok/sendVideo", simtest.FuzzMultipartType, simtest.FuzzMultipart("video", "chat_id", "@"+account, "thumbnail", "attach://thumb")},
		{"POST", "/bottok/sendVideo", "Content-Type: application/json", `{"chat_id":` + chat + `,"video":"https://cdn.example/v.mp4","caption":"c","parse_mode":"MarkdownV2"}`},
		{"POST", "/bottok/sendVideo", "Content-Type: application/x-www-form-urlencoded", "chat_id=" + chat + "&video=BAACAgIAAx"},
		{"GET", "/bottok/sendVideo?chat_id=" + chat + "&video=x", "", ""},
		{"GET", "/bottok/getMe", "", ""},
		{"POST", "/bottok/getChat", "Content-Type: application/json", `{"chat_id":"@` + account + `"}`},
		{"GET", "/bottok/getChatMember?chat_id=" + chat + "&user_id=abc", "", ""},
	}}.Run(f)
}
