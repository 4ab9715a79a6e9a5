package config

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform/facebook"
	"github.com/reelay/reelay/internal/platform/threads"
	"github.com/spf13/pflag"
)

func parse(t *testing.T, env map[string]string, args ...string) (*Config, error) {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	var c Config
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	c.RegisterServer(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if err := ApplyEnv(fs); err != nil {
		return nil, err
	}
	return &c, c.Finish()
}

func TestEnvAndFlags(t *testing.T) {
	c, err := parse(t, map[string]string{
		"REELAY_PUBLISH_WAIT": "3s", "REELAY_ADDR": "127.0.0.1:9999", "REELAY_SANDBOX": "false",
		"REELAY_RATE_LIMIT_RPS": "5", "REELAY_DATA_DIR": "/tmp/x", "REELAY_PUBLISH_WORKERS": "40",
		"REELAY_MEDIA_RETENTION": "168h", "REELAY_SHUTDOWN_TIMEOUT": "40s", "REELAY_DRAIN_DELAY": "0s",
	}, "--addr", "127.0.0.1:7000", "--data", "/srv/reelay")
	if err != nil {
		t.Fatal(err)
	}
	if c.PublishWait != 3*time.Second || c.Sandbox || c.RateLimitRPS != 5 || c.PublishWorkers != 40 ||
		c.MediaRetention != 7*24*time.Hour || c.ShutdownTimeout != 40*time.Second || c.DrainDelay != 0 {
		t.Errorf("env not applied: %+v", c)
	}
	if c.Addr != "127.0.0.1:7000" || c.DataDir != "/srv/reelay" {
		t.Errorf("flags must win over env: addr %q data %q", c.Addr, c.DataDir)
	}
	if c.DatabaseURL != "/srv/reelay/reelay.db" || c.BlobURL != "file:///srv/reelay/blobs" || c.PublicURL != "http://127.0.0.1:7000" {
		t.Errorf("derived defaults: %q %q %q", c.DatabaseURL, c.BlobURL, c.PublicURL)
	}
}

func TestInvalid(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"bad duration":   {"REELAY_PUBLISH_WAIT": "soon"},
		"wait too long":  {"REELAY_PUBLISH_WAIT": "2m"},
		"bad role":       {"REELAY_ROLE": "both"},
		"oidc half":      {"REELAY_OIDC_ISSUER": "https://idp.example"},
		"bad public url": {"REELAY_PUBLIC_URL": "ftp://x"},
		"zero rps":       {"REELAY_RATE_LIMIT_RPS": "0"},
		"account rps":    {"REELAY_RATE_LIMIT_ACCOUNT_RPS": "-1"},
		"address burst":  {"REELAY_RATE_LIMIT_ADDRESS_BURST": "0"},
		"proxy by name":  {"REELAY_TRUSTED_PROXIES": "10.0.0.0/8,proxy.local"},
		"no workers":     {"REELAY_PUBLISH_WORKERS": "-1"},
		"retention":      {"REELAY_MEDIA_RETENTION": "10m"},
		"llm relative":   {"REELAY_LLM_URL": "localhost:11434/v1", "REELAY_LLM_MODEL": "llama3.1"},
		"llm no model":   {"REELAY_LLM_URL": "http://localhost:11434/v1"},
		"llm no url":     {"REELAY_LLM_MODEL": "gpt-4o-mini", "REELAY_LLM_API_KEY": "sk-x"},
		"llm timeout":    {"REELAY_LLM_URL": "http://localhost:11434/v1", "REELAY_LLM_MODEL": "m", "REELAY_LLM_TIMEOUT": "-1s"},
		"video relative": {"REELAY_VIDEO_URL": "queue.fal.run/fal-ai/x"},
		"video key only": {"REELAY_VIDEO_API_KEY": "k"},
		"ai wait":        {"REELAY_AI_WAIT": "-1s"},
		"api version":    {"REELAY_INSTAGRAM_API_VERSION": "v26.0/../x"},
		"pinterest url":  {"REELAY_PINTEREST_API_URL": "api-sandbox.pinterest.com"},
		"drain delay":    {"REELAY_DRAIN_DELAY": "-1s"},
		"shutdown":       {"REELAY_SHUTDOWN_TIMEOUT": "-1s"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := parse(t, env); err == nil {
				t.Error("accepted")
			}
		})
	}
}

func TestLLMSettings(t *testing.T) {
	c, err := parse(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.LLMURL != "" || c.LLMTimeout != time.Minute {
		t.Errorf("defaults: url %q timeout %s, want none and 1m", c.LLMURL, c.LLMTimeout)
	}
	c, err = parse(t, map[string]string{
		"REELAY_LLM_URL": "http://localhost:11434/v1", "REELAY_LLM_MODEL": "llama3.1", "REELAY_LLM_API_KEY": "sk-env",
	}, "--llm-timeout", "90s")
	if err != nil {
		t.Fatal(err)
	}
	if c.LLMURL != "http://localhost:11434/v1" || c.LLMModel != "llama3.1" || c.LLMAPIKey != "sk-env" || c.LLMTimeout != 90*time.Second {
		t.Errorf("LLM settings not applied: %q %q %q %s", c.LLMURL, c.LLMModel, c.LLMAPIKey, c.LLMTimeout)
	}
}

func TestVideoSettings(t *testing.T) {
	c, err := parse(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.VideoURL != "" || c.AIWait != time.Minute || c.FFmpeg != "ffmpeg" || c.VideoTimeout != 10*time.Minute {
		t.Errorf("defaults: video %q wait %s ffmpeg %q timeout %s", c.VideoURL, c.AIWait, c.FFmpeg, c.VideoTimeout)
	}
	c, err = parse(t, map[string]string{
		"REELAY_VIDEO_URL": "https://queue.fal.run/fal-ai/kling-video/v2/master/text-to-video", "REELAY_VIDEO_API_KEY": "fal-key",
		"REELAY_AI_WAIT": "5s", "REELAY_FFMPEG": "/opt/ffmpeg/bin/ffmpeg",
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.VideoAPIKey != "fal-key" || c.AIWait != 5*time.Second || c.FFmpeg != "/opt/ffmpeg/bin/ffmpeg" {
		t.Errorf("video settings not applied: wait %s ffmpeg %q, key set %v", c.AIWait, c.FFmpeg, c.VideoAPIKey != "")
	}
}

func TestMediaRetention(t *testing.T) {
	for env, want := range map[string]time.Duration{"": DefaultMediaRetention, "0": 0, "1h": time.Hour} {
		// A subtest each: t.Setenv's value lasts until its test ends.
		t.Run(env, func(t *testing.T) {
			vars := map[string]string{}
			if env != "" {
				vars["REELAY_MEDIA_RETENTION"] = env
			}
			c, err := parse(t, vars)
			if err != nil || c.MediaRetention != want {
				t.Errorf("REELAY_MEDIA_RETENTION=%q: %v, %v; want %v", env, c.MediaRetention, err, want)
			}
		})
	}
}

func TestMetricsSettings(t *testing.T) {
	if c, err := parse(t, nil); err != nil || c.MetricsAddr != "" || c.MetricsToken != "" {
		t.Errorf("defaults: %q %q %v, want neither", c.MetricsAddr, c.MetricsToken, err)
	}
	c, err := parse(t, map[string]string{"REELAY_METRICS_ADDR": "127.0.0.1:9090", "REELAY_METRICS_TOKEN": " 0123456789abcdef \n"})
	if err != nil {
		t.Fatal(err)
	}
	if c.MetricsAddr != "127.0.0.1:9090" || c.MetricsToken != "0123456789abcdef" {
		t.Errorf("metrics settings: addr %q, token %q (want it trimmed)", c.MetricsAddr, c.MetricsToken)
	}
	for name, env := range map[string]map[string]string{
		"no port":           {"REELAY_METRICS_ADDR": "127.0.0.1"},
		"the main listener": {"REELAY_METRICS_ADDR": "127.0.0.1:8080"},
		"short token":       {"REELAY_METRICS_TOKEN": "hunter2"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := parse(t, env)
			if err == nil {
				t.Fatal("accepted")
			}
			if tok := env["REELAY_METRICS_TOKEN"]; tok != "" && strings.Contains(err.Error(), tok) {
				t.Errorf("the error repeats the token: %v", err)
			}
		})
	}
}

func TestTrustedProxies(t *testing.T) {
	got, err := ParseTrustedProxies(" 10.1.2.3/8, 192.0.2.7 ,2001:db8::/32,::ffff:198.51.100.1,")
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.7/32"),
		netip.MustParsePrefix("2001:db8::/32"), netip.MustParsePrefix("198.51.100.1/32")}
	if !slices.Equal(got, want) {
		t.Errorf("trusted proxies %v, want %v", got, want)
	}
	if got, err := ParseTrustedProxies(""); err != nil || got != nil {
		t.Errorf("none: %v %v", got, err)
	}
}

func TestRateLimitDefaults(t *testing.T) {
	c, err := parse(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.RateLimitAccountRPS != 0 || c.RateLimitAccountBurst != 0 || c.RateLimitAddressRPS != 5 ||
		c.RateLimitAddressBurst != 100 || c.TrustedProxies != "" {
		t.Errorf("defaults: account %v/%d (want 0/0, the key's), address %v/%d (want 5/100), proxies %q",
			c.RateLimitAccountRPS, c.RateLimitAccountBurst, c.RateLimitAddressRPS, c.RateLimitAddressBurst, c.TrustedProxies)
	}
}

func TestAPIVersions(t *testing.T) {
	c, err := parse(t, map[string]string{"REELAY_LINKEDIN_API_VERSION": "202607"}, "--instagram-api-version", "v25.0")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"linkedin": "202607", "instagram": "v25.0",
		"facebook": facebook.Description.API.Version, "threads": threads.Description.API.Version,
	} {
		if got := c.APIVersion(name); got != want {
			t.Errorf("%s API version = %q, want %q", name, got, want)
		}
	}
	// Only platforms that version their API have the setting.
	if _, err := parse(t, nil, "--telegram-api-version", "9"); err == nil {
		t.Error("--telegram-api-version accepted: Telegram's Bot API has no version reelay chooses")
	}
}
