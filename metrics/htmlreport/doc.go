// Package htmlreport writes one self-contained HTML page from the result
// files of any runs: conformance and gradient-check reports (JSON), bench
// tables (JSON), training reports (JSON) and training curves (CSV). The
// page has the environment the results were measured on, the conformance
// results by suite and by operator with every failure and skip and its
// reason, the training curves as inline SVG (package plot's figures), the
// training summaries and the bench table: one file to open in a browser
// or attach to an issue, with no network access needed to view it.
package htmlreport
