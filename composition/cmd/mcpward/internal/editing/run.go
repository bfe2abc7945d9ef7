package editing

import (
	"context"
	"fmt"

	"github.com/mcpward/mcpward/composition"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/app"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/cmdutil"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/iostreams"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/jsonout"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/termsafe"
	"github.com/mcpward/mcpward/composition/cmd/mcpward/internal/view"
	"github.com/mcpward/mcpward/core/definition"
	"github.com/mcpward/mcpward/core/refusal"
)

// Target is where an edit goes and how it reports.
type Target struct {
	IO *iostreams.IOStreams
	// App builds the run's App; it is called only after the file is
	// written, so it reads the new file.
	App  func() (*app.App, error)
	JSON bool
	// Options and Env locate the scope's file (the global flags).
	Options app.Options
	Env     app.Env
	Scope   Scope
}

// Noted is err with a "fix:" line printed after it.
func Noted(err error, fix string) error {
	return &cmdutil.NotedError{Err: err, Note: "fix: " + fix}
}

// Add writes entry as server name into t's scope file: refused when the
// file already defines name (ReasonServerExists), when the entry would not
// decode as a usable definition (ReasonEntryInvalid), or when it holds a
// literal credential (ReasonLiteralSecret) unless allowLiteral (never for
// the project scope). Then it prints the entry, redacted, and how the
// configuration now resolves name.
func Add(ctx context.Context, t Target, name string, entry *Node, allowLiteral bool) error {
	path, err := Path(t.Options, t.Env, t.Scope)
	if err != nil {
		return cmdutil.FlagErrorf("%s", err.Error())
	}
	f, err := Load(t.Scope, path)
	if err != nil {
		return loadFailed(err, t.Scope)
	}
	if f.Has(name) {
		return Noted(&refusal.Error{Class: refusal.Config, Reason: ReasonServerExists, Server: name, Origin: path, Detail: "the " + string(t.Scope) + " scope already defines it"},
			fmt.Sprintf("remove it first (mcpward remove %s --scope %s), or choose another name", termsafe.Line(name), t.Scope))
	}
	f.Put(name, entry)
	def, err := f.Validate(name)
	if err != nil {
		return Noted(err, "correct the entry: \"mcpward help add-json\" lists the fields of an entry")
	}
	found := FindLiteralSecrets(def)
	if len(found) > 0 && !allowLiteral {
		se := RefuseLiteralSecrets(name, t.Scope, found).(*SecretError)
		return Noted(se, se.Fix())
	}
	if err := f.Save(); err != nil {
		return saveFailed(err, t.Scope)
	}
	return report(ctx, t, "added", name, path, Project(def), "", found)
}

// report prints an edit's outcome: the entry (redacted) and, when the
// name is still defined, how the whole configuration now resolves it.
func report(ctx context.Context, t Target, action, name, path string, proj *definition.Projection, problem string, found []LiteralSecret) error {
	var server *view.Server
	var result *composition.ServerEvaluation
	if a, err := t.App(); err == nil {
		if r, ok := a.Evaluate(ctx).Server(name); ok {
			s := view.ToServer(r)
			server, result = &s, &r
		}
	}
	if t.JSON {
		_ = jsonout.Write(t.IO.Out, JSON{Action: action, Name: name, Scope: t.Scope, File: path, Entry: proj, Problem: problem, Server: server, LiteralSecrets: found})
		return nil
	}
	w := t.IO.Out
	switch action {
	case "added":
		fmt.Fprintf(w, "added %s to the %s scope (%s)\n", termsafe.Line(name), t.Scope, termsafe.Line(path))
	case "removed":
		fmt.Fprintf(w, "removed %s from the %s scope (%s)\n", termsafe.Line(name), t.Scope, termsafe.Line(path))
	default:
		fmt.Fprintf(w, "%s in the %s scope (%s)\n", termsafe.Line(name), t.Scope, termsafe.Line(path))
	}
	WriteEntry(w, proj)
	if problem != "" {
		fmt.Fprintf(w, "  problem    %s\n", termsafe.Line(problem))
	}
	for _, l := range found {
		fmt.Fprintf(w, "warning: %s holds a literal credential (kept with --allow-literal-secret; %s would keep it out of the file)\n", termsafe.Line(l.Field), termsafe.Line(l.Use))
	}
	if len(found) > 0 && t.Scope == ScopeProject {
		fmt.Fprintln(w, "warning: the project file is shared: the next commit of it gives these credentials to everyone who clones the project")
	}
	if result != nil {
		WriteState(w, *result, t.Scope)
	} else if action == "removed" {
		fmt.Fprintf(w, "%s is no longer defined in any configuration file\n", termsafe.Line(name))
	}
	return nil
}

// Remove deletes server name from t's scope file. When the file does not
// define it, the refusal (ReasonServerNotInScope) names the scopes whose
// file does.
func Remove(ctx context.Context, t Target, name string) error {
	path, err := Path(t.Options, t.Env, t.Scope)
	if err != nil {
		return cmdutil.FlagErrorf("%s", err.Error())
	}
	f, err := Load(t.Scope, path)
	if err != nil {
		return loadFailed(err, t.Scope)
	}
	var def *definition.Definition
	if e, ok := f.Decode(name); ok {
		def = e.Def
	}
	if !f.Delete(name) {
		return NotInScope(t, name, path)
	}
	if err := f.Save(); err != nil {
		return saveFailed(err, t.Scope)
	}
	return report(ctx, t, "removed", name, path, Project(def), "", nil)
}

// Get prints server name as t's scope file defines it (redacted), and how
// the whole configuration resolves it.
func Get(ctx context.Context, t Target, name string) error {
	path, err := Path(t.Options, t.Env, t.Scope)
	if err != nil {
		return cmdutil.FlagErrorf("%s", err.Error())
	}
	f, err := Load(t.Scope, path)
	if err != nil {
		return loadFailed(err, t.Scope)
	}
	e, ok := f.Decode(name)
	if !ok {
		return NotInScope(t, name, path)
	}
	problem := e.Problem
	if problem != "" && e.Field != "" {
		problem += ", field " + e.Field
	} else if problem == "" && e.Def != nil && e.Def.Refusal != "" {
		problem = e.Def.Refusal
	}
	return report(ctx, t, "found", name, path, Project(e.Def), problem, nil)
}

// NotInScope is the refusal of a name t's scope file does not define,
// with the scopes whose file does.
func NotInScope(t Target, name, path string) error {
	err := &refusal.Error{Class: refusal.Config, Reason: ReasonServerNotInScope, Server: name, Origin: path, Detail: "the " + string(t.Scope) + " scope does not define it"}
	elsewhere := Locate(t.Options, t.Env, name)
	for _, s := range Scopes {
		if p, ok := elsewhere[s]; ok && s != t.Scope {
			return Noted(err, fmt.Sprintf("the %s scope defines it (%s): add --scope %s", s, termsafe.Line(p), s))
		}
	}
	return Noted(err, "\"mcpward list\" shows every server and the file that defines it; mcpward edits only the local, project and user files")
}

// saveFailed adds what to do to a failed Save.
func saveFailed(err error, s Scope) error {
	if refusal.ReasonOf(err) == ReasonFileChanged {
		return Noted(err, "run the command again (it reads the file afresh)")
	}
	return Noted(err, "check that the directory is writable, or name another file with --"+string(s))
}

// loadFailed adds what to do to a failed Load.
func loadFailed(err error, s Scope) error {
	if refusal.ReasonOf(err) == ReasonForeignFile {
		return Noted(err, "edit it with that host's own tool; for mcpward, leave out --"+string(s)+" or name one of mcpward's files")
	}
	return Noted(err, "correct the file by hand, or name another file with --"+string(s))
}
