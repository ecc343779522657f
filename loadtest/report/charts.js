// Draws report.html from the results.json inlined in it. Plain browser JavaScript plus Chart.js; no build step.
(function () {
  'use strict';

  const data = JSON.parse(document.getElementById('lab-data').textContent);
  const env = data.environment;
  const settings = data.settings;
  const runs = data.runs;
  const measured = runs.filter((run) => !run.error);

  // REST in warm colours, gRPC in cool ones, everywhere: paths and the services that serve them.
  const PATH_COLOURS = {
    'rest/unary': '#e8590c', 'grpc/unary': '#1c7ed6', 'grpc/stream': '#0ca678', 'rest/square': '#868e96',
  };
  const PROCESS_COLOURS = {
    'aggregator-service': '#7048e8', 'square-rest-service': '#f59f00', 'square-grpc-service': '#1098ad',
    'ab': '#adb5bd', 'other': '#dee2e6',
  };
  const PROCESS_LABELS = {
    'ab': 'ab (load generator)', 'other': 'everything else on the machine',
  };
  const SERVICES = ['aggregator-service', 'square-rest-service', 'square-grpc-service']
    .filter((name) => measured.some((run) => run.cpu && run.cpu[name]));
  const DASHES = [[], [8, 4], [2, 3], [12, 4, 2, 4]];

  const paths = settings.paths;
  const isSweep = settings.concurrency.length > 1 || settings.n.length > 1;
  const combos = [];
  settings.n.forEach((n) => settings.concurrency.forEach((c) => combos.push({ n, c })));

  const colourOf = (path) => PATH_COLOURS[path] || '#495057';
  const comboLabel = (n, c) => 'n=' + n + ', c=' + c;
  const runLabel = (run) => (isSweep ? run.path + ' ' + comboLabel(run.n, run.concurrency) : run.path);
  const findRun = (path, n, c) => measured.find((r) => r.path === path && r.n === n && r.concurrency === c);
  const fmt = (value, digits) => (value === null || value === undefined ? '–'
    : Number(value).toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }));
  const ms = (value) => (value === null || value === undefined ? '–' : value >= 1000
    ? fmt(value / 1000, 2) + ' s' : fmt(value, value < 10 ? 2 : 1) + ' ms');
  // CPU per request or per call of the services that served the run's path (an idle one's is not the path's).
  const pathCpu = (run, field) => run.services.reduce((sum, name) => sum + ((run.cpu[name] || {})[field] || 0), 0);
  const problemsOf = (run) => {
    if (run.error) return [run.error];
    const found = [];
    if (!run.verified) found.push('answer not verified');
    if (run.failed) found.push(run.failed + ' failed requests');
    if (run.non2xx) found.push(run.non2xx + ' non-2xx responses');
    return found;
  };
  const el = (tag, attrs, children) => {
    const node = document.createElement(tag);
    Object.entries(attrs || {}).forEach(([key, value]) => {
      if (key === 'text') node.textContent = value; else if (key === 'style') node.style.cssText = value;
      else node.setAttribute(key, value);
    });
    (children || []).forEach((child) => node.appendChild(child));
    return node;
  };

  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
  Chart.defaults.color = '#3e4c59';
  Chart.defaults.plugins.legend.labels.boxWidth = 14;
  // Line charts show a line in their legend, dashed like the line it names.
  const lineLegend = { labels: { usePointStyle: true, pointStyle: 'line', pointStyleWidth: 28 } };

  const axisTitle = (text) => ({ display: true, text, font: { weight: '600' } });
  let drawn = 0;
  const draw = (id, config) => { const chart = new Chart(document.getElementById(id), config); drawn += 1; return chart; };

  function header() {
    // A sweep has many lines: taller charts keep them apart under their legends.
    document.body.classList.toggle('sweep', isSweep);
    const when = (data.finished_at || data.started_at || '').replace('T', ' ');
    document.getElementById('subtitle').textContent = when + ' · ' + settings.requests + ' requests per run · '
      + 'concurrency ' + settings.concurrency.join(', ') + ' · n = ' + settings.n.join(', ')
      + ' squares per request · warm-up of ' + settings.warmup + ' requests discarded';
    const machine = document.getElementById('machine');
    [['CPU', env.cpu_model], ['Cores', env.cores], ['Memory', env.memory_gib + ' GiB'], ['OS', env.os],
      ['JDK', env.jdk], ['JVM options', env.java_opts || '(none)'], ['Load generator', env.ab],
      ['Commit', (env.git_commit || 'unknown').slice(0, 12) + ((env.git_commit || '').endsWith('-dirty') ? ' (dirty)' : '')]]
      .forEach(([key, value]) => machine.appendChild(el('span', {}, [el('b', { text: key }), document.createTextNode(String(value))])));
    const troubled = runs.filter((run) => problemsOf(run).length);
    if (troubled.length) {
      document.getElementById('alerts').appendChild(el('div', { class: 'alert', text: troubled.length
        + ' run(s) had failures, so their figures are not comparable: '
        + troubled.map((run) => runLabel(run) + ' (' + problemsOf(run).join('; ') + ')').join(', ') }));
    }
  }

  // One card per path at the first setting: the numbers the article's table compares.
  function cards() {
    if (isSweep) return;
    const box = document.getElementById('cards');
    measured.forEach((run) => {
      const cpuMs = pathCpu(run, 'ms_per_request');
      const card = el('div', { class: 'card', style: '--accent:' + colourOf(run.path) }, [
        el('h3', { text: run.path }),
        el('div', { class: 'what', text: run.n + ' squares per request' }),
        el('div', { class: 'big' }, [document.createTextNode(fmt(run.rps, 1) + ' '), el('small', { text: 'req/s' })]),
        el('dl', {}, [
          el('dt', { text: 'p50 / p90' }), el('dd', { text: ms(run.latency_ms.p50) + ' / ' + ms(run.latency_ms.p90) }),
          el('dt', { text: 'p99 / max' }), el('dd', { text: ms(run.latency_ms.p99) + ' / ' + ms(run.latency_ms.max) }),
          el('dt', { text: 'service CPU per request' }), el('dd', { text: fmt(cpuMs, 2) + ' ms' }),
          el('dt', { text: 'failed' }), el('dd', { text: String(run.failed + run.non2xx) }),
        ]),
      ]);
      box.appendChild(card);
    });
  }

  function throughputChart() {
    draw('chart-throughput', {
      type: 'bar',
      data: {
        labels: combos.map((combo) => comboLabel(combo.n, combo.c)),
        datasets: paths.map((path) => ({
          label: path, backgroundColor: colourOf(path),
          data: combos.map((combo) => (findRun(path, combo.n, combo.c) || {}).rps ?? null),
        })),
      },
      options: {
        scales: { y: { beginAtZero: true, title: axisTitle('requests per second') } },
        plugins: { tooltip: { callbacks: { label: (ctx) => ctx.dataset.label + ': ' + fmt(ctx.parsed.y, 2) + ' req/s' } } },
      },
    });
  }

  function scaleToggle(buttonId, chart, initial) {
    const button = document.getElementById(buttonId);
    const show = (type) => {
      chart.options.scales.y.type = type;
      button.textContent = type === 'logarithmic' ? 'log scale: on' : 'log scale: off';
      chart.update();
    };
    button.addEventListener('click', () => show(chart.options.scales.y.type === 'logarithmic' ? 'linear' : 'logarithmic'));
    show(initial);
  }

  function latencyCurveChart() {
    const chart = draw('chart-latency-curve', {
      type: 'line',
      data: {
        datasets: measured.filter((run) => run.latency_curve_ms).map((run) => ({
          label: runLabel(run), borderColor: colourOf(run.path), backgroundColor: colourOf(run.path),
          borderDash: DASHES[combos.findIndex((c) => c.n === run.n && c.c === run.concurrency) % DASHES.length],
          borderWidth: 2, pointRadius: 0, tension: 0,
          data: run.latency_curve_ms.map((millis, percent) => ({ x: percent, y: millis })),
        })),
      },
      options: {
        interaction: { mode: 'nearest', axis: 'x', intersect: false },
        scales: {
          x: { type: 'linear', min: 0, max: 100, ticks: { stepSize: 10, callback: (v) => v + '%' },
            title: axisTitle('share of requests at least this fast (percentile)') },
          y: { type: 'linear', title: axisTitle('time per request (ms)') },
        },
        plugins: { legend: lineLegend, tooltip: { callbacks: {
          title: (items) => 'p' + items[0].parsed.x,
          label: (ctx) => ctx.dataset.label + ': ' + ms(ctx.parsed.y) } } },
      },
    });
    scaleToggle('toggle-curve-scale', chart, isSweep ? 'logarithmic' : 'linear');
  }

  // A stacked bar per run: one segment per process, from the run's cpu entries.
  function cpuChart(id, field, yTitle, processes, max) {
    draw(id, {
      type: 'bar',
      data: {
        labels: measured.map(runLabel),
        datasets: processes.map((name) => ({
          label: PROCESS_LABELS[name] || name, backgroundColor: PROCESS_COLOURS[name],
          data: measured.map((run) => (run.cpu[name] || {})[field] ?? null),
        })),
      },
      options: {
        scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, max, title: axisTitle(yTitle) } },
        plugins: { tooltip: { callbacks: { label: (ctx) => ctx.dataset.label + ': ' + fmt(ctx.parsed.y, 2) } } },
      },
    });
  }

  function cpuCharts() {
    cpuChart('chart-cpu-per-request', 'ms_per_request', 'CPU ms per request', SERVICES.concat(['ab']));
    const cores = env.cores || 1;
    document.getElementById('cpu-util-hint').textContent = 'CPU time over wall time of the measured run, in % of one core: '
      + (cores * 100) + ' % means all ' + cores + ' cores busy. The stack adds up to the whole machine.';
    cpuChart('chart-cpu-utilisation', 'percent', 'CPU % (' + (cores * 100) + ' % = all ' + cores + ' cores)',
      SERVICES.concat(['ab', 'other']), cores * 100);
  }

  // The services' own view: one downstream call's mean time as the aggregator's client sees it and inside the
  // square service, per run. Drawn only when the runs have server-side figures (older results do not).
  const sides = measured.filter((run) => run.server_side && !run.server_side.error);
  const squareUs = (side) => (side.square_us_per_call ?? side.square_us_per_call_upper_bound ?? null);
  function callTimeChart() {
    if (!sides.length) return;
    document.getElementById('figure-call-time').hidden = false;
    const hatch = (colour) => {
      const canvas = document.createElement('canvas');
      canvas.width = 8; canvas.height = 8;
      const context = canvas.getContext('2d');
      context.fillStyle = colour; context.globalAlpha = 0.35; context.fillRect(0, 0, 8, 8);
      context.globalAlpha = 1; context.strokeStyle = colour; context.lineWidth = 2;
      context.beginPath(); context.moveTo(0, 8); context.lineTo(8, 0); context.stroke();
      return context.createPattern(canvas, 'repeat');
    };
    draw('chart-call-time', {
      type: 'bar',
      data: {
        labels: sides.map(runLabel),
        datasets: [
          { label: 'client side (aggregator, send to answer)', backgroundColor: '#7048e8',
            data: sides.map((run) => run.server_side.client_us_per_call ?? null) },
          { label: 'server side (square service)',
            backgroundColor: sides.map((run) => (run.server_side.square_us_per_call_upper_bound != null
              ? hatch(PROCESS_COLOURS[run.server_side.square_service] || '#1098ad')
              : PROCESS_COLOURS[run.server_side.square_service] || '#1098ad')),
            data: sides.map((run) => squareUs(run.server_side)) },
        ],
      },
      options: {
        scales: { y: { beginAtZero: true, title: axisTitle('µs per call (mean)') } },
        plugins: { tooltip: { callbacks: { label: (ctx) => {
          const side = sides[ctx.dataIndex].server_side;
          const bound = ctx.datasetIndex === 1 && side.square_us_per_call_upper_bound != null ? ' (upper bound)' : '';
          return ctx.dataset.label + ': ' + fmt(ctx.parsed.y, 1) + ' µs' + bound;
        } } } },
      },
    });
  }

  function sweepCharts() {
    const byConcurrency = settings.concurrency.slice().sort((a, b) => a - b);
    if (byConcurrency.length < 2) return;
    document.getElementById('sweep').hidden = false;
    const lines = [];
    paths.forEach((path) => settings.n.forEach((n, index) => lines.push({ path, n, dash: DASHES[index % DASHES.length] })));
    const series = (line, pick) => byConcurrency.map((c) => { const run = findRun(line.path, line.n, c); return run ? pick(run) : null; });
    const common = (yTitle) => ({
      interaction: { mode: 'nearest', axis: 'x', intersect: false },
      scales: { x: { title: axisTitle('concurrent ab clients') }, y: { type: 'linear', title: axisTitle(yTitle) } },
      plugins: { legend: lineLegend },
    });
    draw('chart-sweep-throughput', {
      type: 'line',
      data: {
        labels: byConcurrency,
        datasets: lines.map((line) => ({
          label: line.path + ' n=' + line.n, borderColor: colourOf(line.path), backgroundColor: colourOf(line.path),
          borderDash: line.dash, data: series(line, (run) => run.rps),
        })),
      },
      options: common('requests per second'),
    });
    const latency = draw('chart-sweep-latency', {
      type: 'line',
      data: {
        labels: byConcurrency,
        datasets: lines.flatMap((line) => ['p50', 'p90'].map((key) => ({
          label: line.path + ' n=' + line.n + ' ' + key, borderColor: colourOf(line.path), backgroundColor: colourOf(line.path),
          borderDash: key === 'p90' ? [6, 4] : [], borderWidth: key === 'p90' ? 1.5 : 2.5,
          data: series(line, (run) => run.latency_ms[key]),
        }))),
      },
      options: common('time per request (ms)'),
    });
    scaleToggle('toggle-sweep-scale', latency, 'logarithmic');
  }

  // A table row per run; a run that failed is red, with why in its tooltip.
  function table(id, heads, cellsOf) {
    const node = document.getElementById(id);
    node.appendChild(el('thead', {}, [el('tr', {}, heads.map((head) => el('th', { text: head })))]));
    const body = el('tbody');
    runs.forEach((run) => {
      const found = problemsOf(run);
      const cells = [run.path, run.n, run.concurrency].concat(run.error
        ? ['error: ' + run.error].concat(Array(heads.length - 4).fill('')) : cellsOf(run));
      const row = el('tr', found.length ? { class: 'bad', title: found.join('; ') } : {});
      cells.forEach((cell, index) => {
        const td = el('td', { text: String(cell) });
        if (index === 0) td.prepend(el('span', { class: 'swatch', style: 'background:' + colourOf(run.path) }));
        row.appendChild(td);
      });
      body.appendChild(row);
    });
    node.appendChild(body);
  }

  function runsTables() {
    table('runs', ['path', 'n', 'concurrency', 'req/s', 'mean', 'p50', 'p90', 'p99', 'max', 'completed', 'failed', 'non-2xx'],
      (run) => [fmt(run.rps, 2), ms(run.latency_ms.mean), ms(run.latency_ms.p50), ms(run.latency_ms.p90),
        ms(run.latency_ms.p99), ms(run.latency_ms.max), run.completed, run.failed, run.non2xx]);
    const cpuCell = (entry) => (entry ? fmt(entry.percent, 0) + ' %\n' + fmt(entry.seconds, 2) + ' s' : '–');
    table('resources', ['path', 'n', 'concurrency'].concat(SERVICES.map((name) => name),
      ['ab', 'machine', 'service CPU / request', 'service CPU / call', 'peak RSS (MiB)']),
    (run) => {
      return SERVICES.map((name) => cpuCell(run.cpu[name])).concat([cpuCell(run.cpu.ab), cpuCell(run.cpu.machine),
        fmt(pathCpu(run, 'ms_per_request'), 2) + ' ms', fmt(pathCpu(run, 'us_per_call'), 1) + ' µs',
        SERVICES.map((name) => fmt(run.rss_mb[name], 0)).join(' / ')]);
    });
  }

  function serverSideTable() {
    if (!runs.some((run) => run.server_side)) return;
    document.getElementById('server-side-section').hidden = false;
    const count = (value) => (value === null || value === undefined ? '–' : Number(value).toLocaleString('en-US'));
    table('server-side', ['path', 'n', 'concurrency', 'aggregator requests', 'aggregator ms / request',
      'downstream calls', 'client µs / call', 'square calls', 'square µs / call'], (run) => {
      const side = run.server_side || { error: 'no server-side figures' };
      if (side.error) return [side.error, '', '', '', '', ''];
      const bound = side.square_us_per_call_upper_bound;
      return [count(side.aggregator_requests), fmt(side.aggregator_ms_per_request, 2), count(side.downstream_calls),
        fmt(side.client_us_per_call, 1), count(side.square_calls),
        bound != null ? '≤ ' + fmt(bound, 1) : fmt(side.square_us_per_call, 1)];
    });
  }

  function notes() {
    const cores = env.cores || 1;
    [
      'Everything ran on this one machine: ab, the aggregator and the square services share its ' + cores
        + ' cores, so a service that spends CPU takes it from the others. Read CPU beside requests per second.',
      'ab speaks HTTP/1.0 without keep-alive, as in the article: every request opens a new TCP connection to '
        + 'the aggregator. The aggregator keeps its own connections (and gRPC channel) to the square services.',
      'Each request asks the aggregator for n squares: n REST calls (rest/unary), n gRPC unary calls (grpc/unary) '
        + 'or n messages on one bidirectional gRPC stream (grpc/stream). Every path was checked once for the exact '
        + 'expected answer before it was measured.',
      'Latency percentiles come from ab\'s -e curve (microsecond resolution); ab\'s own printed table, in whole '
        + 'milliseconds, is kept beside it in results.json and in the raw output.',
      'CPU is read from /proc right before and right after the measured run: CPU seconds of each service process, '
        + 'of ab, and of the whole machine. % is of one core (' + (cores * 100) + ' % = all cores). "CPU per downstream '
        + 'call" is the services\' CPU divided by the square calls (or stream messages) the run made.',
      'Peak RSS is each service\'s VmHWM ' + (measured.every((run) => run.rss_scope === 'run')
        ? 'during the measured run (reset right before it).' : 'since the service started.'),
      'Server side: each service\'s own /actuator/prometheus, read right before and right after the measured run '
        + '(outside the CPU window). The client side of a call is the aggregator\'s time from sending it to its answer; '
        + 'the server side is the square service\'s own processing time. The gap is the wire, the framework and queueing.',
      'On a machine shared with other work, figures vary from run to run: "everything else on the machine" in the '
        + 'CPU chart shows how much else was running.',
    ].forEach((text) => document.getElementById('notes').appendChild(el('li', { text })));
  }

  function settingsList() {
    const list = document.getElementById('settings');
    [['PATHS', settings.paths.join(' ')], ['REQUESTS', settings.requests], ['CONCURRENCY', settings.concurrency.join(' ')],
      ['N', settings.n.join(' ')], ['WARMUP', settings.warmup], ['AB_TIMEOUT', settings.ab_timeout_s + ' s'],
      ['ab command', settings.ab_command], ['JAVA_OPTS', settings.java_opts || '(none)'],
      ['AGGREGATOR_ARGS', settings.aggregator_args || '(none)'],
      ['endpoints', Object.entries(settings.endpoints || {}).map(([k, v]) => k + ' ' + v).join(', ')],
      ['Prometheus beside the run', settings.prometheus_url || '(not run; PROMETHEUS=1 runs one)'],
      ['kernel · Python', env.kernel + ' · ' + env.python], ['git commit', env.git_commit || 'unknown']]
      .forEach(([key, value]) => { list.appendChild(el('dt', { text: key })); list.appendChild(el('dd', { text: String(value) })); });
    document.getElementById('footer').textContent = 'Written by loadtest/run.sh. The figures are in results.json beside this '
      + 'file, the raw ab output of every run in raw/, the service logs in logs/.';
  }

  header();
  cards();
  throughputChart();
  latencyCurveChart();
  cpuCharts();
  callTimeChart();
  sweepCharts();
  runsTables();
  serverSideTable();
  notes();
  settingsList();
  // Tells a headless browser (and the render test) that every chart was drawn.
  document.documentElement.setAttribute('data-charts-rendered', String(drawn));
}());
