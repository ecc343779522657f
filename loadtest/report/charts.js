// Draws report.html from the results.json inlined in it. Plain browser JavaScript plus Chart.js and its annotation
// plugin; no build step.
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
  const BAD = '#c92a2a';

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
  // The transport floor (FLOOR=1): each path's downstream calls per second against its bare transport's.
  const floor = data.floor || null;
  const floored = runs.filter((run) => run.floor);
  const goalPct = floor ? Math.round(floor.goal * 100) : 60;
  const pct = (fraction) => (fraction === null || fraction === undefined ? '–' : fmt(fraction * 100, 1) + ' %');
  const windowText = (transport, window) => (transport === 'grpc_unary' ? window.in_flight + ' calls in flight'
    : transport === 'rest_unary' ? window.connections + ' connections'
      : window.streams + ' streams × ' + window.messages_per_stream + ' messages');
  const floorName = (record) => record.transport + ', ' + windowText(record.transport, record.window);
  const el = (tag, attrs, children) => {
    const node = document.createElement(tag);
    Object.entries(attrs || {}).forEach(([key, value]) => {
      if (key === 'text') node.textContent = value; else if (key === 'style') node.style.cssText = value;
      else node.setAttribute(key, value);
    });
    (children || []).forEach((child) => node.appendChild(child));
    return node;
  };

  Chart.register(window['chartjs-plugin-annotation']);
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
    const floorFailed = floor ? floor.runs.filter((record) => record.error) : [];
    if (floorFailed.length) {
      document.getElementById('alerts').appendChild(el('div', { class: 'alert', text: floorFailed.length
        + ' floor run(s) failed, so their paths have no fraction of floor: '
        + floorFailed.map((record) => floorName(record) + ' (' + record.error + ')').join(', ') }));
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
        ].concat(run.floor ? [
          el('dt', { text: 'of its floor (goal ' + goalPct + ' %)' }),
          el('dd', run.floor.error ? { class: 'below-goal', text: 'no floor' }
            : Object.assign({ text: pct(run.floor.fraction) }, run.floor.met ? {} : { class: 'below-goal' })),
        ] : [])),
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

  // A bullet chart: per path, its downstream calls per second as a share of its floor (the grey track, 100 %),
  // with the goal as a dashed line and each path's figure beside its bar.
  function floorChart() {
    if (!floor) return;
    document.getElementById('floor-section').hidden = false;
    const options = floor.aggregator || {};
    const first = floor.runs.find((record) => !record.error);
    const timing = first && first.floor_settings
      ? '; each floor run warmed up for ' + first.floor_settings.warmup + ', then measured ' + first.floor_settings.duration : '';
    document.getElementById('floor-subtitle').textContent = 'transport-floor, run by the lab after the paths with '
      + 'the services stopped, on this machine, with the services\' JVM options and the window the aggregator had in '
      + 'each run (aggregator.in-flight ' + options.in_flight + ', aggregator.rest.max-connections '
      + options.rest_max_connections + ')' + timing + '. Goal: every path at least ' + goalPct + ' % of its floor.';
    const values = floored.map((run) => (run.floor.fraction == null ? null : run.floor.fraction * 100));
    if (!values.some((value) => value !== null)) {
      document.getElementById('figure-floor').hidden = true;
      return;
    }
    // Room right of the longest bar for its label, up to twice the floor: a path far above its floor (a floor that
    // went wrong) runs off the edge, its figure written inside, instead of squashing the others.
    const top = Math.min(200, Math.ceil(Math.max(100, ...values.filter((value) => value !== null)) * 1.15 / 10) * 10);
    document.getElementById('floor-section').style.setProperty('--rows-height', Math.max(220, 60 + 44 * floored.length) + 'px');
    const figure = (run, index) => {
      const common = { type: 'label', yValue: index, content: pct(run.floor.fraction), font: { size: 12, weight: '600' },
        padding: 0 };
      if (run.floor.error) {
        return { ...common, content: 'no floor: the floor run failed', xValue: 0, xAdjust: 6, position: { x: 'start' }, color: BAD };
      }
      if (values[index] > top) {
        return { ...common, content: common.content + ' ▸', xValue: top, xAdjust: -6, position: { x: 'end' }, color: '#ffffff' };
      }
      // A white halo keeps the figure readable where the goal line crosses it.
      return { ...common, xValue: values[index], xAdjust: 6, position: { x: 'start' }, color: run.floor.met ? '#1f2933' : BAD,
        textStrokeColor: '#ffffff', textStrokeWidth: 4 };
    };
    const annotations = {
      goal: { type: 'line', scaleID: 'x', value: goalPct, borderColor: BAD, borderWidth: 2, borderDash: [6, 4],
        label: { display: true, content: 'goal ' + goalPct + ' %', position: 'start', yAdjust: -19, color: BAD,
          backgroundColor: 'transparent', padding: 0, font: { size: 12, weight: '600' } } },
    };
    floored.forEach((run, index) => { annotations['figure' + index] = figure(run, index); });
    draw('chart-floor-fraction', {
      type: 'bar',
      data: {
        labels: floored.map(runLabel),
        datasets: [
          { label: 'the path', data: values, backgroundColor: floored.map((run) => colourOf(run.path)),
            grouped: false, barPercentage: 0.5, categoryPercentage: 0.9, order: 1 },
          { label: 'its floor (100 %)', data: floored.map((run) => (run.floor.error ? null : 100)),
            backgroundColor: '#e9ecef', borderColor: '#ced4da', borderWidth: 1, grouped: false,
            barPercentage: 0.9, categoryPercentage: 0.9, order: 2 },
        ],
      },
      options: {
        indexAxis: 'y',
        layout: { padding: { top: 18, right: 12 } },
        scales: { x: { min: 0, max: top, ticks: { callback: (value) => value + ' %' },
          title: axisTitle('downstream calls per second, % of the floor\'s') } },
        plugins: {
          legend: { display: false },
          tooltip: { callbacks: { label: (ctx) => {
            const record = floored[ctx.dataIndex].floor;
            return ctx.datasetIndex === 0
              ? 'path: ' + fmt(record.path_calls_per_second, 0) + ' calls/s = ' + pct(record.fraction) + ' of the floor'
              : 'floor (' + floorName(record) + '): ' + fmt(record.floor_calls_per_second, 0) + ' calls/s';
          } } },
          // Unclipped: the goal's label sits above the bars, in the chart's top padding.
          annotation: { clip: false, annotations },
        },
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

  // A table row per run; a run that failed is red, with why in its tooltip. A cell is a text, or
  // { text, class, colspan }.
  function table(id, heads, cellsOf, rows) {
    const node = document.getElementById(id);
    node.appendChild(el('thead', {}, [el('tr', {}, heads.map((head) => el('th', { text: head })))]));
    const body = el('tbody');
    (rows || runs).forEach((run) => {
      const found = problemsOf(run);
      const cells = [run.path, run.n, run.concurrency].concat(run.error
        ? ['error: ' + run.error].concat(Array(heads.length - 4).fill('')) : cellsOf(run));
      const row = el('tr', found.length ? { class: 'bad', title: found.join('; ') } : {});
      cells.forEach((cell, index) => {
        const td = cell !== null && typeof cell === 'object'
          ? el('td', Object.assign({ text: String(cell.text) }, cell.class ? { class: cell.class } : {},
            cell.colspan ? { colspan: cell.colspan } : {}))
          : el('td', { text: String(cell) });
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

  function floorTables() {
    if (!floor) return;
    const bad = (text, met) => (met ? text : { text, class: 'below-goal' });
    table('floor-table', ['path', 'n', 'concurrency', 'downstream calls/s', 'floor: transport, window', 'floor calls/s',
      'fraction of floor', 'goal ' + goalPct + ' %', 'path CPU µs/call', 'floor CPU µs/call', 'load 1m: path / floor'],
    (run) => {
      const record = run.floor;
      if (record.error) {
        // Its floor run's error is in the table of the floor runs, below.
        return [fmt(run.rps * run.n, 0), { text: floorName(record), class: 'soft' },
          { text: 'no floor: its floor run failed (below)', class: 'below-goal wrap', colspan: 6 }];
      }
      return [fmt(record.path_calls_per_second, 0), { text: floorName(record), class: 'soft' },
        fmt(record.floor_calls_per_second, 0),
        bad(pct(record.fraction), record.met), bad(record.met ? 'met' : 'not met', record.met),
        fmt(record.path_cpu_us_per_call, 1), fmt(record.floor_cpu_us_per_call, 1),
        fmt((run.load_average_before || [])[0], 2) + ' / ' + fmt(record.floor_load_average_1m, 2)];
    }, floored);
    const node = document.getElementById('floor-runs');
    const heads = ['transport', 'window', 'calls/s', 'p50', 'p99', 'client CPU', 'server CPU', 'CPU µs / call',
      'load 1m', 'warm-up / measured', 'output'];
    node.appendChild(el('thead', {}, [el('tr', {}, heads.map((head) => el('th', { text: head })))]));
    const body = el('tbody');
    floor.runs.forEach((record) => {
      const latency = record.latency_us || {};
      const settingsOf = record.floor_settings || {};
      const cells = record.error
        ? [record.transport, windowText(record.transport, record.window),
          { text: 'error: ' + record.error, class: 'wrap', colspan: heads.length - 3 }, record.folder + '/']
        : [record.transport, windowText(record.transport, record.window), fmt(record.calls_per_second, 0),
          ms(latency.p50 / 1000), ms(latency.p99 / 1000), fmt(record.client_cpu_seconds, 2) + ' s',
          fmt(record.server_cpu_seconds, 2) + ' s',
          fmt((record.client_cpu_seconds + record.server_cpu_seconds) * 1e6 / record.calls, 1),
          fmt(record.load_average_1m, 2), settingsOf.warmup + ' / ' + settingsOf.duration, record.folder + '/'];
      const row = el('tr', record.error ? { class: 'bad', title: record.error } : {});
      cells.forEach((cell) => row.appendChild(typeof cell === 'object'
        ? el('td', { text: cell.text, class: cell.class, colspan: cell.colspan }) : el('td', { text: String(cell) })));
      body.appendChild(row);
    });
    node.appendChild(body);
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
    ].concat(floor ? [
      'Floor: the bare transport (transport-floor/, a plain grpc-java or Netty HTTP client and server, no Spring) with '
        + 'the window the aggregator had: rest_unary, as many connections as the aggregator\'s pool could use; grpc_unary, '
        + 'concurrency × min(n, in-flight) calls in flight; grpc_stream, concurrency streams of n messages. It runs after '
        + 'the paths, with the services stopped, so it has the whole machine, as the paths had. The fraction is what the '
        + 'path got through its transport against what the bare transport does here; CPU per call compares the path\'s '
        + 'services (the aggregator also serves ab\'s requests) with the floor\'s client and server.',
    ] : []).forEach((text) => document.getElementById('notes').appendChild(el('li', { text })));
  }

  function settingsList() {
    const list = document.getElementById('settings');
    [['PATHS', settings.paths.join(' ')], ['REQUESTS', settings.requests], ['CONCURRENCY', settings.concurrency.join(' ')],
      ['N', settings.n.join(' ')], ['REPLICAS', (settings.replicas || 1) + ' of each square service'],
      ['WARMUP', settings.warmup], ['AB_TIMEOUT', settings.ab_timeout_s + ' s'],
      ['ab command', settings.ab_command], ['JAVA_OPTS', settings.java_opts || '(none)'],
      ['AGGREGATOR_ARGS', settings.aggregator_args || '(none)'],
      ['endpoints', Object.entries(settings.endpoints || {}).map(([k, v]) => k + ' ' + v).join(', ')],
      ['Prometheus beside the run', settings.prometheus_url || '(not run; PROMETHEUS=1 runs one)'],
      ['FLOOR', settings.floor === false ? '0 (the floor did not run)' : floor
        ? '1: ' + floor.runs.length + ' floor run(s), FLOOR_DURATION ' + (settings.floor_duration || '(the floor\'s default)')
          + ', FLOOR_WARMUP ' + (settings.floor_warmup || '(the floor\'s default)') : '(no floor in these results)'],
      ['kernel · Python', env.kernel + ' · ' + env.python], ['git commit', env.git_commit || 'unknown']]
      .forEach(([key, value]) => { list.appendChild(el('dt', { text: key })); list.appendChild(el('dd', { text: String(value) })); });
    document.getElementById('footer').textContent = 'Written by loadtest/run.sh. The figures are in results.json beside this '
      + 'file, the raw ab output of every run in raw/, the service logs in logs/'
      + (floor ? ', each floor run\'s client and server logs in floor/.' : '.');
  }

  header();
  cards();
  throughputChart();
  latencyCurveChart();
  cpuCharts();
  callTimeChart();
  floorChart();
  sweepCharts();
  runsTables();
  serverSideTable();
  floorTables();
  notes();
  settingsList();
  // Tells a headless browser (and the render test) that every chart was drawn.
  document.documentElement.setAttribute('data-charts-rendered', String(drawn));
}());
