// Package ports declares the interfaces (ports) mcpward's core drives and its
// adapters implement, with the value types that cross them.
//
// This package imports only the standard library. Each interface has one to
// three methods, takes a context.Context first, and documents its
// concurrency guarantee and exactly which error each failure returns: a
// sentinel declared here, or a *refusal.Error (package
// github.com/mcpward/mcpward/core/refusal) of a named Class. The conformance
// suites (module github.com/mcpward/mcpward/conformance) assert those words,
// and package portstest holds in-memory reference fakes of every port.
//
// No value that crosses a port in an error, and no field documented as
// "display" or "audit", ever carries a secret.
package ports
