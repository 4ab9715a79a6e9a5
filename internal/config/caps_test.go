package config

import (
	"strings"
	"testing"
)

func TestCapSettings(t *testing.T) {
	c, err := parse(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxKeysPerAccount != 100 || c.MaxProjectsPerAccount != 100 || c.MaxChannelsPerAccount != 500 || c.MaxWebhooksPerAccount != 20 {
		t.Errorf("default caps: %d keys, %d projects, %d channels, %d webhooks",
			c.MaxKeysPerAccount, c.MaxProjectsPerAccount, c.MaxChannelsPerAccount, c.MaxWebhooksPerAccount)
	}

	c, err = parse(t, map[string]string{"REELAY_MAX_KEYS_PER_ACCOUNT": "5", "REELAY_MAX_PROJECTS_PER_ACCOUNT": "0",
		"REELAY_MAX_CHANNELS_PER_ACCOUNT": "12", "REELAY_MAX_WEBHOOKS_PER_ACCOUNT": "0"}, "--max-channels-per-account", "30")
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxKeysPerAccount != 5 || c.MaxProjectsPerAccount != 0 || c.MaxChannelsPerAccount != 30 || c.MaxWebhooksPerAccount != 0 {
		t.Errorf("caps set: %d keys, %d projects, %d channels, %d webhooks",
			c.MaxKeysPerAccount, c.MaxProjectsPerAccount, c.MaxChannelsPerAccount, c.MaxWebhooksPerAccount)
	}

	for _, name := range []string{"REELAY_MAX_KEYS_PER_ACCOUNT", "REELAY_MAX_PROJECTS_PER_ACCOUNT",
		"REELAY_MAX_CHANNELS_PER_ACCOUNT", "REELAY_MAX_WEBHOOKS_PER_ACCOUNT"} {
		t.Run(name, func(t *testing.T) {
			if _, err := parse(t, map[string]string{name: "-1"}); err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%s=-1: %v, want a refusal naming it", name, err)
			}
		})
	}
}
