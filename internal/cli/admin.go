package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/reelay/reelay/client"
	"github.com/reelay/reelay/internal/auth"
	"github.com/reelay/reelay/internal/config"
	"github.com/reelay/reelay/internal/store"
)

func newAccountsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "accounts", Short: "Manage accounts in the local database"}
	cmd.AddCommand(newAccountsCreateCmd(), newAccountsListCmd(), newAccountsUpdateCmd(), newAccountsCreditsCmd())
	return cmd
}

func newAccountsCreateCmd() *cobra.Command {
	var cfg config.Config
	var name, oidcSubject, oidcIssuer string
	var aiCredits int64
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "create --name NAME",
		Short: "Create an account with a \"Default\" project and a live API key",
		Long: "Create an account with a project named \"Default\" and a live API key. The key is printed " +
			"once and cannot be shown again. Works against the same database as a running server.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" {
				return errors.New("--name is required")
			}
			limit := flagInt(cmd.Flags(), "monthly-post-limit")
			if limit != nil && *limit < 0 {
				return errors.New("--monthly-post-limit must not be negative")
			}
			if aiCredits < 0 {
				return errors.New("--ai-credits must not be negative")
			}
			na := store.NewAccount{Name: name, MonthlyPostLimit: limit, AICredits: aiCredits}
			if oidcSubject != "" {
				if oidcIssuer == "" {
					return errors.New("--oidc-subject needs --oidc-issuer (or REELAY_OIDC_ISSUER)")
				}
				na.Identity = &store.Identity{Issuer: oidcIssuer, Subject: oidcSubject}
			}
			raw, rec := auth.NewKey("default")
			na.Key = &rec
			var created store.CreatedAccount
			err := withStore(cmd.Context(), &cfg, func(st *store.Store) (err error) {
				created, err = st.CreateAccount(cmd.Context(), na)
				return err
			})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(out).Encode(map[string]string{
					"account_id": created.Account.ID, "project_id": created.Project.ID, "api_key": raw})
			}
			fmt.Fprintf(out, "account %s (%s)\nproject %s (Default)\napi key %s\n\nThe key is shown only now: keep it somewhere safe.\n",
				created.Account.ID, name, created.Project.ID, raw)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "name", "", "account name")
	f.Int("monthly-post-limit", 0, "posts allowed per UTC month (default: unlimited)")
	f.Int64Var(&aiCredits, "ai-credits", 0, "AI credits to start with")
	f.StringVar(&oidcSubject, "oidc-subject", "", "link this OIDC subject (the token's sub) to the account")
	f.StringVar(&oidcIssuer, "oidc-issuer", "", "issuer of --oidc-subject")
	f.BoolVar(&asJSON, "json", false, `print {"account_id","project_id","api_key"}`)
	storageCommand(cmd, &cfg)
	return cmd
}

func newAccountsListCmd() *cobra.Command {
	var cfg config.Config
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List accounts",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var accounts []store.Account
			err := withStore(cmd.Context(), &cfg, func(st *store.Store) (err error) {
				accounts, err = st.ListAccounts(cmd.Context())
				return err
			})
			if err != nil {
				return err
			}
			if asJSON {
				rows := make([]accountRow, len(accounts))
				for i, a := range accounts {
					rows[i] = newAccountRow(a)
				}
				return json.NewEncoder(cmd.OutOrStdout()).Encode(rows)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tMONTHLY LIMIT\tAI CREDITS\tSUSPENDED\tCREATED")
			for _, a := range accounts {
				limit := "unlimited"
				if a.MonthlyPostLimit != nil {
					limit = fmt.Sprint(*a.MonthlyPostLimit)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%v\t%s\n", a.ID, a.Name, limit, a.AICredits, a.Suspended, a.CreatedAt.Format(time.RFC3339))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	storageCommand(cmd, &cfg)
	return cmd
}

// accountRow is how `accounts list --json` and `accounts update --json` print an account.
type accountRow struct {
	ID               string    `json:"id"`
	Name             string    `json:"name"`
	MonthlyPostLimit *int      `json:"monthly_post_limit"`
	AICredits        int64     `json:"ai_credits"`
	Suspended        bool      `json:"suspended"`
	CreatedAt        time.Time `json:"created_at"`
}

func newAccountRow(a store.Account) accountRow {
	return accountRow{a.ID, a.Name, a.MonthlyPostLimit, a.AICredits, a.Suspended, a.CreatedAt}
}

func newAccountsUpdateCmd() *cobra.Command {
	var cfg config.Config
	var suspend, unsuspend, asJSON bool
	cmd := &cobra.Command{
		Use:   "update ID [--monthly-post-limit N] [--ai-credits N] [--suspend|--unsuspend] [--name NAME]",
		Short: "Change an account's plan: its post limit, AI credits, suspension or name",
		Long: "Change an account's monthly post limit, AI credits, suspension or name; fields whose flag " +
			"is not given stay as they are. Works against the same database as a running server.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			f := cmd.Flags()
			var u store.AccountUpdate
			if f.Changed("name") {
				name, _ := f.GetString("name")
				if name == "" {
					return errors.New("--name must not be empty")
				}
				u.Name = &name
			}
			if limit := flagInt(f, "monthly-post-limit"); limit != nil {
				switch {
				case *limit == -1:
					limit = nil
				case *limit < 0:
					return errors.New("--monthly-post-limit must be -1 (unlimited) or not negative")
				}
				u.MonthlyPostLimit = &limit
			}
			if f.Changed("ai-credits") {
				credits, _ := f.GetInt64("ai-credits")
				if credits < 0 {
					return errors.New("--ai-credits must not be negative")
				}
				u.AICredits = &credits
			}
			if suspend && unsuspend {
				return errors.New("--suspend and --unsuspend cannot be used together")
			}
			if suspend || unsuspend {
				u.Suspended = &suspend
			}
			if u == (store.AccountUpdate{}) {
				return errors.New("nothing to update: give --monthly-post-limit, --ai-credits, --suspend, --unsuspend or --name")
			}
			var a store.Account
			err := withStore(cmd.Context(), &cfg, func(st *store.Store) (err error) {
				a, err = st.UpdateAccount(cmd.Context(), id, u)
				if errors.Is(err, store.ErrNotFound) {
					return fmt.Errorf("account %s %w", id, err)
				}
				return err
			})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(out).Encode(newAccountRow(a))
			}
			limit, state := "unlimited", "active"
			if a.MonthlyPostLimit != nil {
				limit = fmt.Sprint(*a.MonthlyPostLimit)
			}
			if a.Suspended {
				state = "suspended"
			}
			fmt.Fprintf(out, "account %s (%s): monthly post limit %s, %d AI credits, %s\n", a.ID, a.Name, limit, a.AICredits, state)
			return nil
		},
	}
	f := cmd.Flags()
	f.String("name", "", "new account name")
	f.Int("monthly-post-limit", 0, "posts allowed per UTC month; -1 for unlimited")
	f.Int64("ai-credits", 0, "set the AI credits to this (not negative); the credit ledger records the difference")
	f.BoolVar(&suspend, "suspend", false, "suspend the account")
	f.BoolVar(&unsuspend, "unsuspend", false, "lift the account's suspension")
	f.BoolVar(&asJSON, "json", false, "print the account as JSON, in the shape accounts list --json uses")
	storageCommand(cmd, &cfg)
	return cmd
}

func newAccountsCreditsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "credits",
		Short: "Give, take back and audit an account's AI credits",
		Long: "Give or take back AI credits and list an account's credit ledger. Every change is a ledger " +
			"row, written under the same lock as the reservations AI requests make, so these commands are " +
			"safe against the same database as a running server.",
	}
	cmd.AddCommand(
		newCreditsMoveCmd("add", "Give an account N more AI credits", store.CreditGrant),
		newCreditsMoveCmd("remove", "Take N AI credits back from an account (never below zero)", store.CreditAdjust),
		newCreditsLedgerCmd(),
	)
	return cmd
}

// newCreditsMoveCmd is `accounts credits add` (kind grant) or `accounts credits remove` (kind
// adjust): the same arguments and output, opposite directions.
func newCreditsMoveCmd(verb, short, kind string) *cobra.Command {
	var cfg config.Config
	var reason string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   verb + " ID N [--reason R]",
		Short: short,
		Long: short + ", recorded in the credit ledger with --reason, and print the new balance. " +
			"Works against the same database as a running server.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			n, err := strconv.ParseInt(args[1], 10, 64)
			if err != nil || n <= 0 {
				return fmt.Errorf("N must be a positive whole number of credits, not %q", args[1])
			}
			var e store.LedgerEntry
			err = withStore(cmd.Context(), &cfg, func(st *store.Store) (err error) {
				if kind == store.CreditGrant {
					e, err = st.AddCredits(cmd.Context(), id, n, reason)
				} else {
					e, err = st.RemoveCredits(cmd.Context(), id, n, reason)
				}
				var lacking *store.InsufficientCreditsError
				switch {
				case errors.Is(err, store.ErrNotFound):
					return fmt.Errorf("account %s %w", id, err)
				case errors.As(err, &lacking):
					return fmt.Errorf("account %s has %d AI credits; cannot remove %d", id, lacking.Balance, lacking.Needed)
				}
				return err
			})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(out).Encode(map[string]any{"account_id": id, "ai_credits": e.BalanceAfter, "entry": newLedgerRow(e)})
			}
			fmt.Fprintf(out, "account %s: %+d AI credits, balance %d\n", id, e.Delta, e.BalanceAfter)
			return nil
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why, for the ledger")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"account_id","ai_credits","entry"}, entry in the shape of accounts credits ledger --json`)
	storageCommand(cmd, &cfg)
	return cmd
}

func newCreditsLedgerCmd() *cobra.Command {
	var cfg config.Config
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ledger ID [--limit N]",
		Short: "List an account's AI credit movements, newest first",
		Long: "List an account's AI credit movements, newest first: grants, reservations made by AI " +
			"requests, their settlement (spent, delta 0) or refund, and operators' adjustments. Each row " +
			"shows the balance right after it.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id := args[0]
			if limit < 0 {
				return errors.New("--limit must not be negative")
			}
			var entries []store.LedgerEntry
			err := withStore(cmd.Context(), &cfg, func(st *store.Store) (err error) {
				if _, err := st.GetAccount(cmd.Context(), id); err != nil {
					return fmt.Errorf("account %s %w", id, err)
				}
				entries, err = st.CreditLedger(cmd.Context(), id, store.LedgerFilter{Limit: limit})
				return err
			})
			if err != nil {
				return err
			}
			if asJSON {
				rows := make([]ledgerRow, len(entries))
				for i, e := range entries {
					rows[i] = newLedgerRow(e)
				}
				return json.NewEncoder(cmd.OutOrStdout()).Encode(rows)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tTIME\tKIND\tDELTA\tBALANCE\tRESERVATION\tREASON")
			for _, e := range entries {
				reservation := e.ReservationID
				if reservation == "" {
					reservation = "-"
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%+d\t%d\t%s\t%s\n", e.ID, e.CreatedAt.Format(time.RFC3339), e.Kind, e.Delta,
					e.BalanceAfter, reservation, e.Reason)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 50, "show at most this many movements; 0 for all")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	storageCommand(cmd, &cfg)
	return cmd
}

// ledgerRow is how the credit commands print a ledger row.
type ledgerRow struct {
	ID            int64     `json:"id"`
	Kind          string    `json:"kind"`
	Delta         int64     `json:"delta"`
	BalanceAfter  int64     `json:"balance_after"`
	ReservationID *string   `json:"reservation_id"`
	Reason        string    `json:"reason"`
	CreatedAt     time.Time `json:"created_at"`
}

func newLedgerRow(e store.LedgerEntry) ledgerRow {
	r := ledgerRow{ID: e.ID, Kind: e.Kind, Delta: e.Delta, BalanceAfter: e.BalanceAfter, Reason: e.Reason, CreatedAt: e.CreatedAt}
	if e.ReservationID != "" {
		r.ReservationID = &e.ReservationID
	}
	return r
}

func newKeysCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "keys", Short: "Manage an account's API keys in the local database"}
	var account string
	cmd.PersistentFlags().StringVar(&account, "account", "", "account id (required)")

	var cfgCreate config.Config
	var name string
	var createJSON bool
	create := &cobra.Command{
		Use:   "create --account ID --name NAME",
		Short: "Create an API key; it is printed once",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if name == "" {
				return errors.New("--name is required")
			}
			raw, rec := auth.NewKey(name)
			var k store.APIKey
			err := withStore(cmd.Context(), &cfgCreate, func(st *store.Store) (err error) {
				if err := requireAccount(cmd.Context(), st, account); err != nil {
					return err
				}
				k, err = st.CreateAPIKey(cmd.Context(), account, rec)
				return err
			})
			if err != nil {
				return err
			}
			if createJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(map[string]string{"id": k.ID, "name": k.Name, "key": raw})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "key %s (%s)\n%s\n\nThe key is shown only now.\n", k.ID, k.Name, raw)
			return nil
		},
	}
	create.Flags().StringVar(&name, "name", "", "key name")
	create.Flags().BoolVar(&createJSON, "json", false, "print JSON")
	storageCommand(create, &cfgCreate)

	var cfgList config.Config
	list := &cobra.Command{
		Use:   "list --account ID",
		Short: "List an account's active keys",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var keys []store.APIKey
			err := withStore(cmd.Context(), &cfgList, func(st *store.Store) (err error) {
				if err := requireAccount(cmd.Context(), st, account); err != nil {
					return err
				}
				keys, err = st.ListAPIKeys(cmd.Context(), account)
				return err
			})
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tPREFIX\tCREATED\tLAST USED")
			for _, k := range keys {
				used := "never"
				if k.LastUsedAt != nil {
					used = k.LastUsedAt.Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s…\t%s\t%s\n", k.ID, k.Name, k.Prefix, k.CreatedAt.Format(time.RFC3339), used)
			}
			return tw.Flush()
		},
	}
	storageCommand(list, &cfgList)

	var cfgRevoke config.Config
	revoke := &cobra.Command{
		Use:   "revoke --account ID KEY_ID",
		Short: "Revoke a key; it stops working at once",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			err := withStore(cmd.Context(), &cfgRevoke, func(st *store.Store) error {
				if err := requireAccount(cmd.Context(), st, account); err != nil {
					return err
				}
				if err := st.RevokeAPIKey(cmd.Context(), account, args[0]); err != nil {
					return fmt.Errorf("key %s: %w", args[0], err)
				}
				return nil
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "revoked %s\n", args[0])
			return nil
		},
	}
	storageCommand(revoke, &cfgRevoke)
	cmd.AddCommand(create, list, revoke)
	return cmd
}

func newProjectsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "projects",
		Short: "List and create projects: through the API, or with --account in the local database",
		Long: "List and create an account's projects. Without --account they call the HTTP API with the " +
			"API key (REELAY_URL, REELAY_API_KEY); with --account they work on the local database, as the " +
			"other administration commands do.",
	}
	var account string
	cmd.PersistentFlags().StringVar(&account, "account", "", "account id: work on the local database instead of calling the API")

	var cfgCreate config.Config
	var name, description string
	create := &cobra.Command{
		Use:   "create --name NAME [--description D] [--account ID]",
		Short: "Create a project",
		Args:  cobra.NoArgs,
		RunE:  nil, // set below, once the API flags exist
	}
	create.Flags().StringVar(&name, "name", "", "project name")
	create.Flags().StringVar(&description, "description", "", "project description")
	storageCommand(create, &cfgCreate)
	createAPI := apiCommand(create)
	create.RunE = func(cmd *cobra.Command, _ []string) error {
		if name == "" {
			return usagef("--name is required")
		}
		if account == "" {
			return createProjectAPI(cmd, createAPI, name, description)
		}
		var p store.Project
		err := withStore(cmd.Context(), &cfgCreate, func(st *store.Store) (err error) {
			if err := requireAccount(cmd.Context(), st, account); err != nil {
				return err
			}
			p, err = st.CreateProject(cmd.Context(), account, name, description)
			return err
		})
		if err != nil {
			return err
		}
		if createAPI.json {
			return printJSON(cmd.OutOrStdout(), projectRow(p))
		}
		fmt.Fprintf(cmd.OutOrStdout(), "project %s (%s)\n", p.ID, p.Name)
		return nil
	}

	var cfgList config.Config
	list := &cobra.Command{
		Use:   "list [--account ID]",
		Short: "List the account's projects",
		Args:  cobra.NoArgs,
	}
	storageCommand(list, &cfgList)
	listAPI := apiCommand(list)
	list.RunE = func(cmd *cobra.Command, _ []string) error {
		if account == "" {
			return listProjectsAPI(cmd, listAPI)
		}
		var projects []store.Project
		err := withStore(cmd.Context(), &cfgList, func(st *store.Store) (err error) {
			if err := requireAccount(cmd.Context(), st, account); err != nil {
				return err
			}
			projects, err = st.ListProjects(cmd.Context(), account)
			return err
		})
		if err != nil {
			return err
		}
		rows := make([]client.Project, len(projects))
		for i, p := range projects {
			rows[i] = projectRow(p)
		}
		return printProjects(cmd.OutOrStdout(), listAPI.json, rows)
	}
	cmd.AddCommand(create, list)
	return cmd
}

// projectRow is a project of the database in the API's shape, so that both sources print
// alike.
func projectRow(p store.Project) client.Project {
	return client.Project{ID: p.ID, Name: p.Name, Description: p.Description, CreatedAt: p.CreatedAt}
}
