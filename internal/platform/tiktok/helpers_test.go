package tiktok

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/reelay/reelay/internal/platform"
	"github.com/reelay/reelay/internal/platform/providertest"
	"github.com/reelay/reelay/internal/platform/sim"
	"github.com/reelay/reelay/internal/platform/tiktok/tiktoksim"
	"github.com/reelay/reelay/internal/provider"
)

// env is providertest's Env with the TikTok simulator (mounted below /sandbox/tiktok) and a
// provider pointed at it.
type env struct {
	*providertest.Env
	sim  *tiktoksim.Sim
	prov *Provider
}

func newEnv(t *testing.T, accounts sim.StaticAccounts, opts tiktoksim.Options, cfg Config) *env {
	t.Helper()
	return newEnvRand(t, accounts, opts, cfg, nil)
}

// newEnvRand is newEnv with the simulator's dice for flaky accounts (nil: they never fail).
func newEnvRand(t *testing.T, accounts sim.StaticAccounts, opts tiktoksim.Options, cfg Config, rnd func() float64) *env {
	t.Helper()
	e := &env{}
	e.Env = providertest.NewEnv(t, platform.TikTok, accounts, func(c sim.Config) http.Handler {
		e.sim = tiktoksim.NewSim(c, opts)
		return e.sim
	}, providertest.Options{Rand: rnd})
	cfg.Now = e.Clock.Now
	if cfg.Repeat.Delay == 0 {
		cfg.Repeat.Delay = time.Millisecond
	}
	cfg.HTTPClient = e.Client
	e.prov = New(cfg)
	return e
}

func (e *env) dest(token string, v provider.Media, options string) *provider.Destination {
	return &provider.Destination{
		ID:          "dst_1",
		Account:     "acct",
		Credentials: map[string]string{"access_token": token},
		BaseURL:     e.BaseURL,
		Title:       "A title",
		Caption:     "A caption #reelay",
		Options:     json.RawMessage(options),
		Video:       v,
	}
}

// step runs one Step of e's provider and stores its State in d, as the publisher does.
func (e *env) step(d *provider.Destination) (provider.Outcome, error) {
	return providertest.Step(context.Background(), e.prov, d)
}

// run is providertest's Run with e's provider; it returns the last outcome.
func (e *env) run(d *provider.Destination, maxSteps int) (provider.Outcome, error) {
	e.T.Helper()
	outs, err := e.Run(e.prov, d, maxSteps)
	if err != nil || len(outs) == 0 {
		return provider.Outcome{}, err
	}
	return outs[len(outs)-1], nil
}

func stateOf(t *testing.T, raw json.RawMessage) State {
	t.Helper()
	var st State
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatalf("state %s: %v", raw, err)
	}
	return st
}
