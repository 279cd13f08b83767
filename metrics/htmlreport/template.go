package htmlreport

// pageHTML is the page: one file, its style inline, no script.
const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 72em; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; margin-top: 2em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.05em; margin-top: 1.4em; }
table { border-collapse: collapse; margin: 0.6em 0; }
th, td { border: 1px solid #ddd; padding: 0.2em 0.6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.passed { color: #17692a; } .failed { color: #b00020; font-weight: 600; } .skipped { color: #8a6100; }
.meta { color: #555; }
.figures { display: grid; grid-template-columns: repeat(auto-fill, minmax(30em, 1fr)); gap: 1em; }
.figures svg { width: 100%; height: auto; border: 1px solid #eee; }
td.reason { font-family: ui-monospace, monospace; font-size: 0.85em; max-width: 50em; overflow-wrap: anywhere; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="meta">Written {{.Generated}} by d500 report.</p>

{{with .Env}}
<h2>Environment</h2>
<table>
<tr><th>CPU</th><td>{{.CPU}}</td></tr>
<tr><th>cores</th><td>{{.Cores}} (GOMAXPROCS {{.GOMAXPROCS}})</td></tr>
<tr><th>system</th><td>{{.GOOS}}/{{.GOARCH}}, {{.GoVersion}}, host {{.Host}}</td></tr>
<tr><th>commit</th><td>{{if .Commit}}{{short .Commit}}{{if .Modified}} (with uncommitted changes){{end}}{{else}}unknown{{end}}</td></tr>
<tr><th>measured</th><td>{{.Time}}</td></tr>
</table>
{{end}}

{{range .Checks}}
<h2>{{if eq .Kind "gradcheck"}}Gradient check{{else}}Conformance{{end}}: {{.Backend}}</h2>
<p><span class="passed">{{.Passed}} passed</span>, <span class="failed">{{.Failed}} failed</span>, <span class="skipped">{{.Skipped}} skipped</span>
of {{len .Tests}} cases ({{pct .Passed (len .Tests)}} passed){{if .Interrupted}}; <strong>the run was interrupted</strong>: these are the cases that ran{{end}}. <span class="meta">From {{.Path}}.</span></p>
<h3>By suite</h3>
<table>
<tr><th>suite</th><th>passed</th><th>failed</th><th>skipped</th><th>passed</th></tr>
{{range .Suites}}<tr><td>{{.Name}}</td><td class="n">{{.Passed}}</td><td class="n">{{.Failed}}</td><td class="n">{{.Skipped}}</td><td class="n">{{pct .Passed (add3 .Passed .Failed .Skipped)}}</td></tr>
{{end}}</table>
{{if .Operators}}
<h3>By operator</h3>
<p class="meta">A case counts for every operator its model uses.</p>
{{if .Problems}}
<table>
<tr><th>operator with a case not passed</th><th>passed</th><th>failed</th><th>skipped</th></tr>
{{range .Operators}}{{if .NotPassed}}<tr><td>{{.Name}}</td><td class="n">{{.Passed}}</td><td class="n{{if .Failed}} failed{{end}}">{{.Failed}}</td><td class="n{{if .Skipped}} skipped{{end}}">{{.Skipped}}</td></tr>
{{end}}{{end}}</table>
{{end}}
<details>
<summary>all {{len .Operators}} operators</summary>
<table>
<tr><th>operator</th><th>passed</th><th>failed</th><th>skipped</th></tr>
{{range .Operators}}<tr><td>{{.Name}}</td><td class="n">{{.Passed}}</td><td class="n{{if .Failed}} failed{{end}}">{{.Failed}}</td><td class="n{{if .Skipped}} skipped{{end}}">{{.Skipped}}</td></tr>
{{end}}</table>
</details>
{{end}}
{{if .Problems}}
<h3>Cases not passed, with the reason</h3>
<table>
<tr><th>case</th><th>status</th><th>reason</th></tr>
{{range .Problems}}<tr><td>{{.Name}}</td><td class="{{.Status}}">{{.Status}}</td><td class="reason">{{.Reason}}</td></tr>
{{end}}</table>
{{end}}
{{end}}

{{if or .Figures .Trains}}
<h2>Training</h2>
{{range .Trains}}
<table>
<tr><th>model</th><td>{{.Model}} on {{.Dataset}}, backend {{.Backend}}</td></tr>
<tr><th>optimizer</th><td>{{.Optimizer}} ({{hyper .Hyperparams}}), batch {{.Batch}}</td></tr>
<tr><th>trained</th><td>{{.Steps}} steps, {{.Samples}} samples, {{.Epochs}} epochs in {{f "%.1f" .Seconds}} s{{if .Interrupted}}, <strong>interrupted</strong>{{end}}{{if .Error}}, <span class="failed">{{.Error}}</span>{{end}}</td></tr>
<tr><th>result</th><td>final loss {{num .FinalLoss "%.4f"}}, test accuracy {{num .TestAccuracy "%.4f"}}</td></tr>
</table>
{{end}}
{{if .Figures}}
<p class="meta">Curves of {{range $i, $f := .CurveFiles}}{{if $i}}, {{end}}{{$f}}{{end}}.</p>
<div class="figures">
{{range .Figures}}<figure>{{.SVG}}</figure>
{{end}}</div>
{{end}}
{{end}}

{{range .Benchs}}
<h2>Inference latency: {{.Backend}}{{if .Compare}} against {{.Compare}}{{end}}</h2>
<p class="meta">From {{.Path}}{{if gt .Passes 1}}; measured in {{.Passes}} pooled passes{{end}}. Medians in ms; ratio above 1: {{.Backend}} is slower.</p>
<table>
<tr><th>model</th><th>batch</th><th>threads</th><th>runs</th><th>{{.Backend}}</th><th>{{.Compare}}</th><th>ratio</th><th>per pass</th><th>allocs/inference</th><th>note</th></tr>
{{range .Rows}}<tr><td>{{.Model}}</td><td class="n">{{.Batch}}</td><td class="n">{{.Threads}}</td><td class="n">{{.Runs}}</td>
<td class="n">{{with .Backend}}{{f "%.3f" .Median}}{{end}}</td><td class="n">{{with .Compare}}{{f "%.3f" .Median}}{{end}}</td>
<td class="n">{{if .Ratio}}{{f "%.2f" .Ratio}}{{end}}</td><td class="n">{{spread .PassRatios}}</td>
<td class="n">{{with .Allocations}}{{f "%.0f" .AllocsPerRun}}{{end}}</td><td>{{.Skipped}}{{.Error}}</td></tr>
{{end}}</table>
{{end}}
</body>
</html>
`
