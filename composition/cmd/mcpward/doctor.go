package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/mcpward/mcpward/adapters/oauth"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
	"github.com/mcpward/mcpward/ports"
)

// doctorJSON is doctor --json's output.
type doctorJSON struct {
	Profile   string        `json:"profile"`
	StateDir  string        `json:"stateDir"`
	Stores    []storeJSON   `json:"stores"`
	Sources   []sourceJSON  `json:"sources"`
	Workspace workspaceJSON `json:"workspace"`
	Findings  []findingJSON `json:"findings"`
	OK        bool          `json:"ok"`
}

// storeJSON is one probed store: ok, or the reason it failed.
type storeJSON struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Reason string `json:"reason,omitempty"`
}

// sourceJSON is one configuration file looked at.
type sourceJSON struct {
	Tier    ports.Tier   `json:"tier"`
	Origin  string       `json:"origin"`
	Status  sourceStatus `json:"status"`
	Default bool         `json:"default"`
	Problem string       `json:"problem,omitempty"`
}

// workspaceJSON is the workspace facts the CLI decided.
type workspaceJSON struct {
	Repository string `json:"repository"`
	Trusted    bool   `json:"trusted"`
}

// findingJSON is one problem and its fix. Subject is "server", "source",
// "store" or "state_dir"; Name is the server name, the source origin or
// the store name.
type findingJSON struct {
	Subject string `json:"subject"`
	Name    string `json:"name"`
	State   string `json:"state,omitempty"`
	Reason  string `json:"reason"`
	Why     string `json:"why"`
	Fix     string `json:"fix"`
}

func (a *app) doctor(ctx context.Context) int {
	d := doctorJSON{
		Profile:   a.opts.profile,
		StateDir:  a.stateDir,
		Stores:    []storeJSON{},
		Sources:   []sourceJSON{},
		Workspace: workspaceJSON{Repository: a.ws.repository, Trusted: a.ws.trusted},
		Findings:  []findingJSON{},
	}
	if a.hostErr != nil {
		r := asRefusal(a.hostErr)
		d.Findings = append(d.Findings, findingJSON{
			Subject: "state_dir", Name: a.stateDir, Reason: r.Reason,
			Why: "mcpward cannot use its state directory (" + r.Detail + ")",
			Fix: "make it a directory owned by you with mode 0700, or choose another with --state-dir",
		})
	} else {
		for _, c := range a.host.Check(ctx, checkTimeout) {
			s := storeJSON{Name: c.Name, OK: c.Err == nil}
			if c.Err != nil {
				s.Reason = asRefusal(c.Err).Reason
				d.Findings = append(d.Findings, findingJSON{
					Subject: "store", Name: c.Name, Reason: s.Reason,
					Why: "the " + c.Name + " store did not answer as it should (" + s.Reason + ")",
					Fix: storeFix(a.opts.profile, c.Name),
				})
			}
			d.Stores = append(d.Stores, s)
		}
	}
	for _, s := range a.sources {
		j := sourceJSON{Tier: s.tier, Origin: s.path, Status: s.status, Default: !s.fromFlag}
		if s.status != statusAbsent {
			if p := definition.Decode(s.src).Problem; p != nil {
				j.Problem = string(p.Kind)
				why, fix := explainProblem(*p)
				d.Findings = append(d.Findings, findingJSON{Subject: "source", Name: string(s.tier) + " " + s.path, Reason: j.Problem, Why: why, Fix: fix})
			}
		}
		d.Sources = append(d.Sources, j)
	}
	if a.host != nil {
		for _, r := range a.evaluate(ctx).Servers {
			if r.Usable() && r.Err == nil {
				if st := a.signInState(ctx, r); st != "" && st != string(oauth.SignedIn) {
					d.Findings = append(d.Findings, signInFinding(r.Name, st))
				}
				continue
			}
			why, fix := explain(r)
			d.Findings = append(d.Findings, findingJSON{Subject: "server", Name: r.Name, State: string(r.State), Reason: r.Reason, Why: why, Fix: fix})
		}
	}
	d.OK = len(d.Findings) == 0
	if a.opts.json {
		writeJSON(a.env.stdout, d)
	} else {
		writeDoctor(a, d)
	}
	if !d.OK {
		return exitFailure
	}
	return exitOK
}

// storeFix says what to do about a failing store.
func storeFix(profile, store string) string {
	if store == "tokens" && profile == profileDesktop {
		return "unlock the OS keychain (Secret Service, Keychain or Credential Manager), or use --profile headless"
	}
	return "check the --state-dir directory (mode 0700, owned by you, not full)"
}

// asRefusal returns err's *refusal.Error, or an internal one.
func asRefusal(err error) *refusal.Error {
	var r *refusal.Error
	if errors.As(err, &r) {
		return r
	}
	return refusal.New(refusal.Internal, "internal", "")
}

func writeDoctor(a *app, d doctorJSON) {
	w := a.env.stdout
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "profile\t%s\n", d.Profile)
	fmt.Fprintf(tw, "state dir\t%s\n", d.StateDir)
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
	trust := "not trusted (--trust-workspace trusts it)"
	if d.Workspace.Trusted {
		trust = "trusted (--trust-workspace)"
	}
	fmt.Fprintf(tw, "workspace\t%s, %s\n", d.Workspace.Repository, trust)
	_ = tw.Flush()

	fmt.Fprintln(w, "\nSources:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range d.Sources {
		status := string(s.Status)
		if s.Default {
			status += " (default location)"
		}
		if s.Problem != "" && s.Problem != string(s.Status) {
			status += ": " + s.Problem
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", s.Tier, s.Origin, status)
	}
	_ = tw.Flush()

	if d.OK {
		fmt.Fprintln(w, "\nNo problems found.")
		return
	}
	fmt.Fprintf(w, "\nFindings (%d):\n", len(d.Findings))
	for i, f := range d.Findings {
		head := f.Subject + " " + f.Name
		if f.State != "" {
			head += ": " + f.State + " (" + f.Reason + ")"
		} else {
			head += ": " + f.Reason
		}
		fmt.Fprintf(w, "%3d. %s\n     why: %s\n     fix: %s\n", i+1, head, f.Why, f.Fix)
	}
}
