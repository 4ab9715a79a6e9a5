package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/reelay/reelay/internal/app"
	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/secret"
	"github.com/reelay/reelay/internal/store"
)

func newSecretKeyCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "secret-key", Short: "Make a secret key, and reseal stored secrets after changing it"}
	cmd.AddCommand(newSecretKeyNewCmd(), newSecretKeyResealCmd())
	return cmd
}

func newSecretKeyNewCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "new",
		Short: "Print a new random secret key (base64, 32 bytes) for REELAY_SECRET_KEY",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), secret.NewKey())
			return err
		},
	}
}

// resealBatch is how many rows reseal reads at a time: small enough that no statement holds
// locks for long beside a running fleet.
const resealBatch = 200

func newSecretKeyResealCmd() *cobra.Command {
	var cfg config.Config
	var asJSON bool
	batch := resealBatch
	cmd := &cobra.Command{
		Use:   "reseal",
		Short: "Seal every stored secret with the current key, opening it with a previous one",
		Long: "Seal every stored secret (channel credentials, webhook signing secrets, OAuth consents in " +
			"progress, AI video jobs' model keys) with REELAY_SECRET_KEY, opening those sealed with a key of " +
			"REELAY_SECRET_KEY_PREVIOUS. Values already under the current key are left alone, so it is safe " +
			"to run twice or after an interruption, beside running servers that already have the new key. " +
			"Once it reports nothing left to open with a previous key, REELAY_SECRET_KEY_PREVIOUS can go.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			key, err := existingSecretKey(&cfg)
			if err != nil {
				return err
			}
			previous, err := loadPreviousKeys(&cfg, key)
			if err != nil {
				return err
			}
			box, err := secret.NewBox(key, previous...)
			if err != nil {
				return err
			}
			var counts []app.ResealCount
			err = withStore(cmd.Context(), &cfg, func(st *store.Store) (err error) {
				counts, err = app.Reseal(cmd.Context(), st, box, batch)
				return err
			})
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(counts)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "KIND\tRESEALED\tALREADY CURRENT\tCHANGED MEANWHILE\tNOT OPENED BY ANY KEY")
			unopened := 0
			for _, c := range counts {
				fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\n", c.Kind, c.Resealed, c.Current, c.Changed, len(c.Unopened))
				unopened += len(c.Unopened)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if unopened > 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "\n%d values open with no key given (--json lists their rows): they fail as before the rotation.\n", unopened)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print each kind's counts and the ids of the rows no key opens, as JSON")
	f.IntVar(&batch, "batch", resealBatch, "rows read and resealed at a time")
	cfg.RegisterSecretKeys(f)
	storageCommand(cmd, &cfg)
	return cmd
}

// existingSecretKey is the configured key, or the one in the data folder; unlike a server's
// start it never makes one: resealing under a key no server uses would lock them all out.
func existingSecretKey(cfg *config.Config) ([]byte, error) {
	key, _, err := configuredOrStoredKey(cfg)
	if err == nil && key == nil {
		err = errors.New("no secret key: set REELAY_SECRET_KEY to the servers' key")
	}
	return key, err
}
