// Package doctor is "mcpward doctor": every problem found, each with its
// fix.
package doctor

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpward/mcpward/adapters/oauth"
	"github.com/mcpward/mcpward/adapters/pgstore"
	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/importcmd"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmd/list"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/fleet"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/jsonout"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/termsafe"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/view"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/ports"
)

// checkTimeout bounds each store probe.
const checkTimeout = 5 * time.Second

// Options are doctor's inputs.
type Options struct {
	IO *iostreams.IOStreams
	// App is the factory's AppForDoctor: a Host that cannot be built is a
	// finding, not a failure.
	App  func() (*app.App, error)
	JSON bool
	// Server is doctor NAME's NAME: only that server's findings, and the
	// server connected ("" for none).
	Server string
}

// NewCmdDoctor returns the doctor command; runF, when not nil, replaces
// Run.
func NewCmdDoctor(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IOStreams, App: f.AppForDoctor}
	return &cobra.Command{
		Use:   "doctor [NAME]",
		Short: "Every problem found, each with its fix",
		Long: `Check everything mcpward depends on and list every problem found, each with
why it matters and how to fix it: the state directory and its stores (a
write, a read and a delete on each; the OS keychain with --profile desktop),
every configuration file looked at, every server that is not usable, every
stdio server whose program is not on the PATH it would run with (or that
could not start for another reason found without starting it), and every
usable OAuth server nobody is signed in to. With --store, the shared
store: reachable, its schema version and the key checked against it.

It shows the workspace root the files were found from (the git root, else
the nearest directory holding .mcp.json, else ./), your egress rules
("mcpward help egress") and which rule admitted each server a rule admits.
A configuration file git tracks (read from the git index, never by
running git) that holds a literal credential is a problem: everyone with
the repository has it. A legacy ./.mcpward/local.json is never read as
your private scope, which lives outside the working tree: one git tracks
is the repository's file (a note); one of yours moves to your private file
at the first command (a leftover beside an existing private file is a
problem).

Servers unusable by choice (disabled by an overlay, awaiting your approval,
refused by your organization's managed policy) are listed apart, marked
"intentional" in --json, and are not problems. So are other tools' files
that define servers (Claude Code, Claude Desktop, Cursor, VS Code, Codex,
Gemini CLI, at the locations "mcpward help import" lists): mcpward does not
read them, and each comes with the "mcpward import" command that copies its
servers (subject "import" in --json; only the file and a count are shown).

With NAME, the findings about servers are those of NAME alone, and NAME
(when usable) is connected: a failure to connect is a finding that says
why (its exit status, its program, or its host:port and the network
cause), and the end of a stdio server's own stderr is printed after the
findings, under a heading that says so, with every secret of its
definition and every credential-shaped string masked and every control
character shown escaped. For an OAuth server (its definition has "oauth",
or it refused the connection for its credential), NAME's OAuth discovery
runs too, without signing in: each location tried, its status and outcome,
and what did not line up.

With --json: {"profile", "stateDir", "stores" [{"name", "ok", "reason"}],
"sources" [{"tier", "origin", "status", "why", "default", "problem"}],
"workspace" {"repository", "trusted", "root", "rootFrom" (git, project_file
or cwd), "privateFile"}, "egress" {"file", "userRulesApplied",
"userIgnored", "userAllow", "userDeny", "managedAllow", "managedDeny",
"servers" [{"name", "target", "source", "http"}]}, "store" {"dsn" (password masked), "ok",
"reason", "schema", "schemaVersion", "keyId"} (with --store only), "findings"
[{"subject", "name", "state", "reason", "why", "fix", "intentional",
"detail"}], "ok"}; "ok" is true when every finding is intentional; with
NAME also "connection" {"name", "state", "class", "reason", "detail",
"stderr" (the masked tail, exact)} and, for an OAuth server, "oauth"
{"server", "resource", "issuer", "scopes", "steps" [{"check", "url",
"status", "outcome", "reason", "hint"}], "reason"}.

Exit code 1 when a problem is found; 0 when there is none, intentional
states included.`,
		Example: `  $ mcpward doctor
  $ mcpward doctor --json
  $ mcpward doctor weather`,
		Args: maxOneArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.JSON = f.Globals.JSON
			if len(args) == 1 {
				opts.Server = args[0]
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return Run(cmd.Context(), opts)
		},
	}
}

// doctorJSON is doctor --json's output.
type doctorJSON struct {
	Profile   string        `json:"profile"`
	StateDir  string        `json:"stateDir"`
	Stores    []storeJSON   `json:"stores"`
	Sources   []sourceJSON  `json:"sources"`
	Workspace workspaceJSON `json:"workspace"`
	// Egress is the egress configuration and the servers a rule admits
	// (workspace.go).
	Egress egressJSON `json:"egress"`
	// Store is the shared store (--store); absent otherwise.
	Store    *sharedJSON   `json:"store,omitempty"`
	Findings []findingJSON `json:"findings"`
	OK       bool          `json:"ok"`
	// Connection is doctor NAME's connection of NAME.
	Connection *connectionJSON `json:"connection,omitempty"`
	// OAuth is doctor NAME's OAuth discovery of NAME (oauth.go).
	OAuth *oauth.Report `json:"oauth,omitempty"`
}

// sharedJSON is the shared store probed: its DSN with the password
// masked, and when it opened (reachable, schema migrated, key checked),
// its schema, schema version and current key id.
type sharedJSON struct {
	DSN           string `json:"dsn"`
	OK            bool   `json:"ok"`
	Reason        string `json:"reason,omitempty"`
	Schema        string `json:"schema,omitempty"`
	SchemaVersion int    `json:"schemaVersion,omitempty"`
	KeyID         string `json:"keyId,omitempty"`
}

// connectionJSON is how doctor NAME's connection of NAME went.
type connectionJSON struct {
	Name   string                     `json:"name"`
	State  string                     `json:"state"`
	Class  string                     `json:"class"`
	Reason string                     `json:"reason"`
	Detail *composition.FailureDetail `json:"detail,omitempty"`
	// Stderr is the masked stderr tail of a stdio server (untrusted).
	Stderr *string `json:"stderr,omitempty"`
	// ProtocolVersion is the MCP protocol version negotiated and Era its
	// era ("modern" from 2026-07-28, "legacy" before); omitted when no
	// session was up.
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	Era             string `json:"era,omitempty"`
}

// storeJSON is one probed store: ok, or the reason it failed.
type storeJSON struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Reason string `json:"reason,omitempty"`
}

// sourceJSON is one configuration file looked at.
type sourceJSON struct {
	Tier   ports.Tier       `json:"tier"`
	Origin string           `json:"origin"`
	Status app.SourceStatus `json:"status"`
	// Why says why an unreadable file is ("a FIFO (named pipe), not a
	// regular file", "permission denied").
	Why     string `json:"why,omitempty"`
	Default bool   `json:"default"`
	Problem string `json:"problem,omitempty"`
}

// workspaceJSON is the workspace facts the CLI decided: the repository,
// trust, the root (and how it was found: app.RootGit, RootProjectFile,
// RootCwd) and the private file of the local scope.
type workspaceJSON struct {
	Repository  string `json:"repository"`
	Trusted     bool   `json:"trusted"`
	Root        string `json:"root"`
	RootFrom    string `json:"rootFrom"`
	PrivateFile string `json:"privateFile,omitempty"`
}

// findingJSON is one problem and its fix. Subject is "server", "source",
// "store" or "state_dir"; Name is the server name, the source origin or
// the store name. Intentional marks a server unusable by someone's choice
// (see view.Intentional), which is reported but is not a problem.
type findingJSON struct {
	Subject     string `json:"subject"`
	Name        string `json:"name"`
	State       string `json:"state,omitempty"`
	Reason      string `json:"reason"`
	Why         string `json:"why"`
	Fix         string `json:"fix"`
	Intentional bool   `json:"intentional"`
	// Detail says more about a failure to connect (doctor NAME).
	Detail *composition.FailureDetail `json:"detail,omitempty"`
}

// Run checks and reports.
func Run(ctx context.Context, opts *Options) error {
	a, err := opts.App()
	if err != nil {
		return err
	}
	d := doctorJSON{
		Profile:  a.Options.Profile,
		StateDir: a.StateDir,
		Stores:   []storeJSON{},
		Sources:  []sourceJSON{},
		Workspace: workspaceJSON{Repository: a.Workspace.Repository, Trusted: a.Workspace.Trusted,
			Root: a.Workspace.Root, RootFrom: a.Workspace.RootFrom, PrivateFile: app.PrivateFile(a.Env, a.Workspace.Root)},
		Findings: []findingJSON{},
	}
	if a.Store != nil {
		d.Store = &sharedJSON{DSN: a.Store.DSN, OK: a.HostErr == nil, Schema: a.Store.Schema,
			SchemaVersion: a.Store.SchemaVersion, KeyID: a.Store.KeyID}
	}
	if a.HostErr != nil && d.Store != nil {
		r := view.AsRefusal(a.HostErr)
		d.Store.Reason = r.Reason
		why, fix := sharedStoreFinding(r.Reason, r.Detail)
		d.Findings = append(d.Findings, findingJSON{Subject: "store", Name: "shared", Reason: r.Reason, Why: why, Fix: fix})
	} else if a.HostErr != nil {
		r := view.AsRefusal(a.HostErr)
		d.Findings = append(d.Findings, findingJSON{
			Subject: "state_dir", Name: a.StateDir, Reason: r.Reason,
			Why: "mcpward cannot use its state directory (" + r.Detail + ")",
			Fix: "make it a directory owned by you with mode 0700, or choose another with --state-dir",
		})
	} else {
		for _, c := range a.Host.Check(ctx, checkTimeout) {
			s := storeJSON{Name: c.Name, OK: c.Err == nil}
			if c.Err != nil {
				r := view.AsRefusal(c.Err)
				s.Reason = r.Reason
				why, fix := "the "+c.Name+" store did not answer as it should ("+s.Reason+")", storeFix(a.Options.Profile, c.Name)
				if w, f, ok := replayFinding(r.Reason, r.Server); ok {
					why, fix = w, f
				}
				d.Findings = append(d.Findings, findingJSON{Subject: "store", Name: c.Name, Reason: s.Reason, Why: why, Fix: fix})
			}
			d.Stores = append(d.Stores, s)
		}
	}
	for _, s := range a.Sources {
		j := sourceJSON{Tier: s.Tier, Origin: s.Path, Status: s.Status, Why: s.Why, Default: !s.FromFlag}
		if s.Status != app.StatusAbsent {
			if p := definition.Decode(s.Src).Problem; p != nil {
				j.Problem = string(p.Kind)
				why, fix := view.ExplainProblem(*p)
				if s.Why != "" {
					why = strings.Replace(why, "the file cannot be read", "the file cannot be read ("+s.Why+")", 1)
				}
				if strings.Contains(s.Why, "not a regular file") {
					fix = "make it a regular file: a configuration file is never read from a FIFO, socket or device (nor through a symbolic link to one)"
				}
				d.Findings = append(d.Findings, findingJSON{Subject: "source", Name: string(s.Tier) + " " + s.Path, Reason: j.Problem, Why: why, Fix: fix})
			}
		}
		d.Sources = append(d.Sources, j)
	}
	if opts.Server == "" {
		d.Findings = append(d.Findings, legacyFindings(a)...)
		d.Findings = append(d.Findings, trackedSecretFindings(a)...)
	}
	d.Egress = egressOf(a)
	d.Findings = append(d.Findings, egressFindings(a)...)
	if a.Host != nil {
		for _, r := range a.Evaluate(ctx).Servers {
			if opts.Server != "" && r.Name != opts.Server {
				continue
			}
			if adm, ok := a.EgressAdmission(ctx, r); ok {
				d.Egress.Servers = append(d.Egress.Servers, egressServerJSON{Name: r.Name, Target: adm.Target, Source: adm.Source, HTTP: adm.HTTP})
			}
			if r.Launch != "" {
				why, fix := view.ExplainLaunch(r)
				d.Findings = append(d.Findings, findingJSON{Subject: "server", Name: r.Name, State: string(r.State), Reason: r.Launch, Why: why, Fix: fix})
			}
			if r.Usable() && r.Err == nil {
				if st := a.SignInState(ctx, r); st != "" && st != app.SignedIn {
					d.Findings = append(d.Findings, signInFinding(r.Name, st))
				}
				continue
			}
			why, fix := view.Explain(r)
			d.Findings = append(d.Findings, findingJSON{Subject: "server", Name: r.Name, State: string(r.State), Reason: r.Reason,
				Why: why, Fix: fix, Intentional: view.Intentional(r)})
		}
	}
	if opts.Server == "" {
		d.Findings = append(d.Findings, otherHosts(a.Env)...)
	}
	if opts.Server != "" && a.Host != nil {
		d.Connection = connect(ctx, a, opts.Server, &d)
		d.OAuth = discovery(ctx, a, opts.Server, d.Connection, &d)
	}
	d.OK = true
	for _, f := range d.Findings {
		if !f.Intentional {
			d.OK = false
		}
	}
	if opts.JSON {
		_ = jsonout.Write(opts.IO.Out, d)
	} else {
		write(opts.IO.Out, d)
		if d.OAuth != nil {
			fmt.Fprintln(opts.IO.Out)
			view.WriteDiscovery(opts.IO.Out, opts.Server, d.OAuth)
		}
		if c := d.Connection; c != nil && c.Stderr != nil {
			fmt.Fprintln(opts.IO.Out)
			view.WriteServerStderr(opts.IO.Out, c.Name, *c.Stderr)
		}
	}
	if !d.OK {
		return cmdutil.ErrSilent
	}
	return nil
}

// SubjectImport is the Subject of a finding about another host's file that
// defines servers mcpward does not read: always Intentional (a note, not a
// problem), its Name the file, its Fix the import command.
const SubjectImport = "import"

// ReasonImportable is the Reason of a SubjectImport finding.
const ReasonImportable = "importable"

// otherHosts returns one SubjectImport finding per other host's file that
// defines servers (importcmd.Detect): its path, how many servers, and the
// import command. Nothing of the file's content is shown.
func otherHosts(e app.Env) []findingJSON {
	var out []findingJSON
	for _, c := range importcmd.Detect(e) {
		n := fmt.Sprintf("%d server%s", c.Servers, view.Plural(c.Servers))
		out = append(out, findingJSON{Subject: SubjectImport, Name: c.Path, Reason: ReasonImportable, Intentional: true,
			Why: c.From + "'s file defines " + n + "; mcpward reads only its own files and .mcp.json",
			Fix: "run \"" + c.Command() + " --dry-run\" to see what would be imported, then without --dry-run"})
	}
	return out
}

// sharedStoreFinding says why a shared store that did not open matters and
// how to fix it, by the reason of the failure (detail is its fixed,
// secret-free phrase).
func sharedStoreFinding(reason, detail string) (why, fix string) {
	why = "the shared store cannot be used (" + detail + "); nothing falls back to files"
	switch reason {
	case pgstore.ReasonUnavailable:
		return "the shared store's database cannot be reached; nothing falls back to files",
			"check that the database is up and that this machine reaches its host and port (firewall, DNS, connect_timeout)"
	case pgstore.ReasonAuthRefused:
		return why, "check the database user and its password (in PGPASSWORD, ~/.pgpass or the DSN) and the server's pg_hba.conf"
	case pgstore.ReasonTLSFailed:
		return why, "with sslmode=verify-full, name in sslrootcert the CA that signed the server's certificate, and connect by the host name the certificate names"
	case pgstore.ReasonConfigInvalid, app.ReasonStoreDSNInvalid:
		return why, "fix the DSN of --store or " + app.StoreEnv + ": a postgres:// URL or a key=value connection string"
	case pgstore.ReasonSchemaTooNew:
		return why, "a newer mcpward migrated the database: upgrade mcpward on this machine (the schema is never downgraded)"
	case pgstore.ReasonKeyMismatch, pgstore.ReasonKeyUnknown, pgstore.ReasonKeyringFailed:
		return why, "use the key file the other machines use: its key for that id is not the one the store was sealed with (nothing was overwritten)"
	case app.ReasonStoreKeyMissing:
		return why, "give the key file with --store-key-file or " + app.StoreKeyFileEnv + " (lines \"ID HEX\", the first the current key)"
	case app.ReasonStoreKeyExposed:
		return why, "make the key file readable by you only: chmod 600 FILE"
	case app.ReasonStoreKeyUnreadable:
		return why, "check the key file's path and that you may read it"
	case app.ReasonStoreKeyInvalid:
		return why, "write the key file as lines \"ID HEX\" (HEX: 64 hexadecimal digits of a random 32-byte key), the first the current key"
	}
	return why, "check the shared store's DSN, key file and database"
}

// maxOneArg is a cobra.PositionalArgs: at most one argument.
func maxOneArg(cmd *cobra.Command, args []string) error {
	if len(args) > 1 {
		return cmdutil.FlagErrorf("%s takes at most 1 argument, got %d", cmd.Name(), len(args))
	}
	return nil
}

// connect connects server name alone (when usable; an unknown name is a
// finding) with the default timeouts, adds a finding to d when it fails,
// and returns how it went with its stderr tail.
func connect(ctx context.Context, a *app.App, name string, d *doctorJSON) *connectionJSON {
	f := fleet.Connect(ctx, a, []string{name}, fleet.SupervisorOptions(fleet.Timeouts{
		Connect: fleet.DefaultConnectTimeout, Call: fleet.DefaultCallTimeout}), nil)
	defer f.Close()
	r := f.Servers()[0]
	c := &connectionJSON{Name: r.Name, State: string(r.State), Class: view.ClassOf(r), Reason: r.Reason,
		ProtocolVersion: r.ProtocolVersion, Era: composition.ProtocolEra(r.ProtocolVersion)}
	switch r.State {
	case composition.StateUnknown:
		d.Findings = append(d.Findings, findingJSON{Subject: "server", Name: name, State: "unknown",
			Reason: composition.ReasonUnknownServer, Why: "no configuration file defines it",
			Fix: "check the name with \"mcpward list\""})
	case composition.StateFailed:
		det := r.Detail
		c.Detail = &det
		why := "connecting it failed (" + r.Class.String() + " " + r.Reason + ")"
		if t := view.FailureText(r.Detail); t != "" {
			why += ": " + t
		}
		fix := "read the server's own output below; check its command, arguments, environment or URL"
		if view.SignInAgain(r.Reason) {
			fix = `run "mcpward login ` + name + `" (the OAuth discovery below shows what a sign-in will use)`
		}
		d.Findings = append(d.Findings, findingJSON{Subject: "server", Name: name, State: "failed", Reason: r.Reason,
			Why: why, Fix: fix, Detail: &det})
	}
	if tail, ok := f.ServerStderr(name); ok {
		c.Stderr = &tail
	}
	return c
}

// replayFinding says why a store refused as replayed or rolled back
// matters and what to do (ok false for any other reason). server is the
// server the store named, "" when none.
func replayFinding(reason, server string) (why, fix string, ok bool) {
	switch reason {
	case pgstore.ReasonApprovalReplayed, composition.ReasonStoreReplayed:
		if server == "" {
			return "the shared store holds an approval it does not hold now: it was revoked or replaced, then put back by someone who can write the database but has no store key (" + reason + "); it is refused, and its server cannot be used until it is removed",
				"find out who writes to the database without mcpward; then run \"mcpward revoke NAME\" for the server (it removes the replayed approval with the others) and approve it again", true
		}
		name := termsafe.Line(server)
		return "an approval of " + name + " in the shared store was revoked or replaced, then put back by someone who can write the database but has no store key (" + reason + "): it is refused, and " + name + " cannot be used until it is removed",
			"find out who writes to the database without mcpward; then run \"mcpward revoke " + name + "\" (it removes the replayed approval with the others) and approve " + name + " again", true
	case pgstore.ReasonRolledBack:
		return "the shared store is older than a state already seen: its head row or audit log was rolled back by someone who can write the database but has no store key (" + reason + "); approvals and audit refuse it",
			"restore the database from a backup taken after the last approval change, and find out who writes to it without mcpward", true
	}
	return "", "", false
}

// storeFix says what to do about a failing store.
func storeFix(profile, store string) string {
	if profile == app.ProfileShared {
		return "check the shared store's database (reachable, the role's privileges on schema " + pgstore.DefaultSchema + ")"
	}
	if store == "tokens" && profile == app.ProfileDesktop {
		return "unlock the OS keychain (Secret Service, Keychain or Credential Manager), or use --profile headless"
	}
	return "check the --state-dir directory (mode 0700, owned by you, not full)"
}

// write writes doctor's text.
func write(w io.Writer, d doctorJSON) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "profile\t%s\n", d.Profile)
	fmt.Fprintf(tw, "state dir\t%s\n", termsafe.Line(d.StateDir))
	stores := make([]string, len(d.Stores))
	for i, s := range d.Stores {
		stores[i] = s.Name + " ok"
		if !s.OK {
			stores[i] = s.Name + " FAILED (" + s.Reason + ")"
		}
	}
	if len(stores) == 0 {
		stores = []string{"not opened"}
	}
	fmt.Fprintf(tw, "stores\t%s\n", strings.Join(stores, ", "))
	if s := d.Store; s != nil {
		line := termsafe.Line(s.DSN) + ": "
		if s.OK {
			line += fmt.Sprintf("reachable, schema %s version %d, key %s checked", s.Schema, s.SchemaVersion, termsafe.Line(s.KeyID))
		} else {
			line += "FAILED (" + s.Reason + ")"
		}
		fmt.Fprintf(tw, "shared store\t%s\n", line)
	}
	trust := "not trusted (--trust-workspace trusts it)"
	if d.Workspace.Trusted {
		trust = "trusted (--trust-workspace)"
	}
	fmt.Fprintf(tw, "workspace\t%s, %s\n", termsafe.Line(d.Workspace.Repository), trust)
	fmt.Fprintf(tw, "root\t%s (%s)\n", termsafe.Line(d.Workspace.Root), list.RootWords(d.Workspace.RootFrom))
	fmt.Fprintf(tw, "egress\t%s\n", egressLine(d.Egress))
	_ = tw.Flush()

	fmt.Fprintln(w, "\nSources:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range d.Sources {
		status := string(s.Status)
		if s.Why != "" {
			status += " (" + s.Why + ")"
		}
		if s.Default {
			status += " (default location)"
		}
		if s.Problem != "" && s.Problem != string(s.Status) {
			status += ": " + s.Problem
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", s.Tier, termsafe.Line(s.Origin), status)
	}
	_ = tw.Flush()
	writeEgressServers(w, d.Egress)

	if c := d.Connection; c != nil && c.State == string(composition.StateConnected) {
		proto := ""
		if c.ProtocolVersion != "" {
			proto = " (protocol " + c.ProtocolVersion + ", " + c.Era + " era)"
		}
		fmt.Fprintf(w, "\nserver %s: connected%s\n", termsafe.Line(c.Name), proto)
	}
	var problems, notes, imports []findingJSON
	for _, f := range d.Findings {
		switch {
		case f.Subject == SubjectImport:
			imports = append(imports, f)
		case f.Intentional:
			notes = append(notes, f)
		default:
			problems = append(problems, f)
		}
	}
	if len(problems) == 0 {
		fmt.Fprintln(w, "\nNo problems found.")
	} else {
		fmt.Fprintf(w, "\nFindings (%d):\n", len(problems))
		writeFindings(w, problems)
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "\nNot usable by choice, not problems (%d):\n", len(notes))
		writeFindings(w, notes)
	}
	if len(imports) > 0 {
		fmt.Fprintf(w, "\nOther tools' servers you could import, not problems (%d):\n", len(imports))
		writeFindings(w, imports)
	}
}

// writeFindings writes numbered findings with their why and fix.
func writeFindings(w io.Writer, fs []findingJSON) {
	for i, f := range fs {
		head := f.Subject + " " + f.Name
		if f.State != "" {
			head += ": " + f.State + " (" + f.Reason + ")"
		} else {
			head += ": " + f.Reason
		}
		fmt.Fprintf(w, "%3d. %s\n     why: %s\n     fix: %s\n", i+1, termsafe.Line(head), termsafe.Line(f.Why), termsafe.Line(f.Fix))
	}
}

// signInFinding is doctor's finding about a usable OAuth server whose
// sign-in state st is not signed_in.
func signInFinding(name, st string) findingJSON {
	f := findingJSON{Subject: "server", Name: name, State: "allowed", Reason: st,
		Fix: `run "mcpward login ` + name + `"`}
	switch st {
	case string(oauth.SignedOut):
		f.Why = "the server asks for OAuth and nobody signed in to it, so connecting it fails"
	case string(oauth.RefreshNeeded):
		f.Why = "its access token has expired; the next connection refreshes it, or needs a new sign-in"
		f.Fix = `nothing, if the refresh succeeds; otherwise run "mcpward login ` + name + `"`
	default:
		f.Why = "its stored sign-in cannot be read (" + st + ")"
		f.Fix = `run "mcpward logout ` + name + `" to delete it, then "mcpward login ` + name + `"`
	}
	return f
}
