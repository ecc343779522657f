// Draws report.html's charts from the results.json and the charts' part of the view (lab/results/view.py) inlined in it; the
// text and tables are in the page already (report/template.html). Plain browser JavaScript plus Chart.js and its
// annotation plugin; no build step.
(function () {
  'use strict';

  const data = JSON.parse(document.getElementById('lab-data').textContent);
  const view = JSON.parse(document.getElementById('lab-view').textContent);
  const runs = data.runs;
  const labelOf = new Map(runs.map((run, index) => [run, view.run_labels[index]]));
  // A run's concurrency (closed loop) or rate (open loop), and the [min, max] of its figures over its repeats.
  const pointOf = new Map(runs.map((run, index) => [run, view.points[index]]));
  const rangesOf = new Map(runs.map((run, index) => [run, view.ranges[index]]));
  const curveOf = new Map(runs.map((run, index) => [run, view.curves[index]]));
  const measured = runs.filter((run) => !run.error);

  // REST in warm colours, gRPC in cool ones, everywhere: paths and the services that serve them.
  const PATH_COLOURS = {
    'rest/unary': '#e8590c', 'rest/h2c': '#c2255c', 'grpc/unary': '#1c7ed6', 'grpc/pingpong': '#15aabf',
    'grpc/stream': '#0ca678', 'rest/square': '#868e96',
  };
  const PROCESS_COLOURS = {
    'aggregator-service': '#7048e8', 'square-rest-service': '#f59f00', 'square-grpc-service': '#1098ad',
    'toxiproxy': '#66a80f', 'ab': '#adb5bd', 'vegeta': '#adb5bd', 'steal': '#fa5252', 'other': '#dee2e6',
  };
  const PROCESS_LABELS = {
    'toxiproxy': 'Toxiproxy (the network)', 'ab': 'ab (load generator)', 'vegeta': 'Vegeta (load generator)',
    'steal': 'steal (another guest)', 'other': 'everything else on the machine',
  };
  const BAD = '#c92a2a';
  const DASHES = [[], [8, 4], [2, 3], [12, 4, 2, 4]];

  const colourOf = (path) => PATH_COLOURS[path] || '#495057';
  const runLabel = (run) => labelOf.get(run);
  // A run's payload shape and network; results from before PAYLOAD and NETWORK had the article's small call on loopback.
  const payloadOf = (run) => run.payload || 'small';
  const networkOf = (run) => run.network || 'loopback';
  const inCombo = (run, combo) => run.n === combo.n && pointOf.get(run) === combo.c && payloadOf(run) === combo.payload
    && networkOf(run) === combo.network;
  const findRun = (path, combo) => measured.find((r) => r.path === path && inCombo(r, combo));

  // Error bars: a dataset with `ranges` ([min, max] per point, or null) gets a whisker over each bar or point. No
  // error-bar plugin for Chart.js is on Maven Central, so these few lines draw them.
  const errorBars = {
    id: 'errorBars',
    afterDatasetsDraw(chart) {
      const { ctx, scales: { y } } = chart;
      chart.data.datasets.forEach((dataset, index) => {
        const meta = chart.getDatasetMeta(index);
        if (!dataset.ranges || meta.hidden) return;
        ctx.save();
        ctx.strokeStyle = '#1f2933';
        ctx.lineWidth = 1.5;
        meta.data.forEach((element, at) => {
          const range = dataset.ranges[at];
          if (!range) return;
          const [top, bottom] = [y.getPixelForValue(range[1]), y.getPixelForValue(range[0])];
          const half = Math.min(6, (element.width || 12) / 4);
          ctx.beginPath();
          ctx.moveTo(element.x, top); ctx.lineTo(element.x, bottom);
          ctx.moveTo(element.x - half, top); ctx.lineTo(element.x + half, top);
          ctx.moveTo(element.x - half, bottom); ctx.lineTo(element.x + half, bottom);
          ctx.stroke();
        });
        ctx.restore();
      });
    },
  };
  Chart.register(window['chartjs-plugin-annotation'], errorBars);
  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
  Chart.defaults.color = '#3e4c59';
  Chart.defaults.plugins.legend.labels.boxWidth = 14;
  // Line charts show a line in their legend, dashed like the line it names.
  const lineLegend = { labels: { usePointStyle: true, pointStyle: 'line', pointStyleWidth: 28 } };
  // Tooltips show a value as its axis does, with its unit.
  const withUnit = (unit) => ({ callbacks: { label: (ctx) => ctx.dataset.label + ': ' + ctx.formattedValue + unit } });

  const axisTitle = (text) => ({ display: true, text, font: { weight: '600' } });
  let drawn = 0;
  const draw = (id, config) => { const chart = new Chart(document.getElementById(id), config); drawn += 1; return chart; };

  // The page's swatches and cards, rendered by lab/results/report.py, take their path's colour from here, as the charts do.
  function paint() {
    document.querySelectorAll('.swatch[data-path]').forEach((node) => { node.style.background = colourOf(node.dataset.path); });
    document.querySelectorAll('.card[data-path]').forEach((node) => { node.style.setProperty('--accent', colourOf(node.dataset.path)); });
  }

  function throughputChart() {
    draw('chart-throughput', {
      type: 'bar',
      data: {
        labels: view.combos.map((combo) => combo.label),
        datasets: data.settings.paths.map((path) => ({
          label: path, backgroundColor: colourOf(path),
          data: view.combos.map((combo) => (findRun(path, combo) || {}).rps ?? null),
          ranges: view.combos.map((combo) => { const run = findRun(path, combo); return run ? rangesOf.get(run).rps : null; }),
        })),
      },
      options: {
        scales: { y: { beginAtZero: true, title: axisTitle('requests per second') } },
        plugins: { tooltip: withUnit(' req/s') },
      },
    });
  }

  function scaleToggle(buttonId, chart, initial) {
    const button = document.getElementById(buttonId);
    const scale = (type) => {
      chart.options.scales.y.type = type;
      button.textContent = type === 'logarithmic' ? 'log scale: on' : 'log scale: off';
      chart.update();
    };
    button.addEventListener('click', () => scale(chart.options.scales.y.type === 'logarithmic' ? 'linear' : 'logarithmic'));
    scale(initial);
  }

  function latencyCurveChart() {
    const chart = draw('chart-latency-curve', {
      type: 'line',
      data: {
        datasets: measured.filter((run) => curveOf.get(run)).map((run) => ({
          label: runLabel(run), borderColor: colourOf(run.path), backgroundColor: colourOf(run.path),
          borderDash: DASHES[view.combos.findIndex((combo) => inCombo(run, combo)) % DASHES.length],
          borderWidth: 2, pointRadius: 0, tension: 0,
          data: curveOf.get(run).map(([percent, millis]) => ({ x: percent, y: millis })),
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
          label: (ctx) => ctx.dataset.label + ': ' + ctx.formattedValue + ' ms' } } },
      },
    });
    scaleToggle('toggle-curve-scale', chart, view.sweep ? 'logarithmic' : 'linear');
  }

  // A stacked bar per run: one segment per process, from the run's cpu entries.
  function cpuChart(id, field, yTitle, unit, processes, max) {
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
        plugins: { tooltip: withUnit(unit) },
      },
    });
  }

  function cpuCharts() {
    const generator = view.load_generator;
    cpuChart('chart-cpu-per-request', 'ms_per_request', 'CPU ms per request', ' ms', view.services.concat([generator]));
    const utilisation = view.cpu_utilisation;
    cpuChart('chart-cpu-utilisation', 'percent', utilisation.axis, ' %', view.services.concat([generator, 'steal', 'other']),
      utilisation.max);
  }

  // The services' own view: one downstream call's (or stream message's) mean time as the aggregator's client sees it
  // and inside the square service, per run (lab/results/view.py: call_time). A time that is only an upper bound (the stream's
  // time over its messages) is hatched. Drawn only when the runs have server-side figures (older results do not).
  function callTimeChart() {
    const times = view.call_time;
    if (!times) return;
    const hatch = (colour) => {
      const canvas = document.createElement('canvas');
      canvas.width = 8; canvas.height = 8;
      const context = canvas.getContext('2d');
      context.fillStyle = colour; context.globalAlpha = 0.35; context.fillRect(0, 0, 8, 8);
      context.globalAlpha = 1; context.strokeStyle = colour; context.lineWidth = 2;
      context.beginPath(); context.moveTo(0, 8); context.lineTo(8, 0); context.stroke();
      return context.createPattern(canvas, 'repeat');
    };
    const fills = (colours, bounds) => colours.map((colour, index) => (bounds[index] ? hatch(colour) : colour));
    const clientColour = PROCESS_COLOURS['aggregator-service'];
    const serverColours = times.square_services.map((name) => PROCESS_COLOURS[name] || '#1098ad');
    const bounds = [times.client_bound, times.server_bound];
    draw('chart-call-time', {
      type: 'bar',
      data: {
        labels: times.labels,
        datasets: [
          { label: 'client side (aggregator, send to answer)',
            backgroundColor: fills(times.labels.map(() => clientColour), times.client_bound), data: times.client },
          { label: 'server side (square service)', backgroundColor: fills(serverColours, times.server_bound),
            data: times.server },
        ],
      },
      options: {
        scales: { y: { beginAtZero: true, title: axisTitle('µs per call or stream message (mean)') } },
        plugins: { tooltip: { callbacks: { label: (ctx) => ctx.dataset.label + ': ' + ctx.formattedValue + ' µs'
          + (bounds[ctx.datasetIndex][ctx.dataIndex] ? ' (at most: the stream\'s time over its messages)' : '') } } },
      },
    });
  }

  // A bullet chart: per path, its downstream calls per second as a share of its floor (the grey track, 100 %),
  // with the goal as a dashed line and each path's figure beside its bar.
  function floorChart() {
    const floor = view.floor;
    if (!floor) return;
    const values = floor.bars.map((bar) => bar.value);
    if (!values.some((value) => value !== null)) {
      document.getElementById('figure-floor').hidden = true;
      return;
    }
    // Room right of the longest bar for its figure, up to twice the floor: a path far above its floor (a floor that
    // went wrong) runs off the edge, its figure written inside, instead of squashing the others.
    const top = Math.min(200, Math.ceil(Math.max(100, ...values.filter((value) => value !== null)) * 1.15 / 10) * 10);
    document.getElementById('floor-section').style.setProperty('--rows-height', Math.max(220, 60 + 44 * floor.bars.length) + 'px');
    const figure = (bar, index) => {
      const common = { type: 'label', yValue: index, content: bar.text, font: { size: 12, weight: '600' }, padding: 0 };
      if (bar.value === null) return { ...common, xValue: 0, xAdjust: 6, position: { x: 'start' }, color: BAD };
      if (bar.value > top) return { ...common, content: bar.text + ' ▸', xValue: top, xAdjust: -6, position: { x: 'end' }, color: '#ffffff' };
      // A white halo keeps the figure readable where the goal line crosses it.
      return { ...common, xValue: bar.value, xAdjust: 6, position: { x: 'start' }, color: bar.met ? '#1f2933' : BAD,
        textStrokeColor: '#ffffff', textStrokeWidth: 4 };
    };
    const annotations = {
      goal: { type: 'line', scaleID: 'x', value: floor.goal, borderColor: BAD, borderWidth: 2, borderDash: [6, 4],
        label: { display: true, content: floor.goal_label, position: 'start', yAdjust: -19, color: BAD,
          backgroundColor: 'transparent', padding: 0, font: { size: 12, weight: '600' } } },
    };
    floor.bars.forEach((bar, index) => { annotations['figure' + index] = figure(bar, index); });
    draw('chart-floor-fraction', {
      type: 'bar',
      data: {
        labels: floor.bars.map((bar) => bar.label),
        datasets: [
          { label: 'the path', data: values, backgroundColor: floor.bars.map((bar) => colourOf(bar.path)),
            grouped: false, barPercentage: 0.5, categoryPercentage: 0.9, order: 1 },
          { label: 'its floor (100 %)', data: values.map((value) => (value === null ? null : 100)),
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
          tooltip: { callbacks: { label: (ctx) => floor.bars[ctx.dataIndex].tooltips[ctx.datasetIndex] } },
          // Unclipped: the goal's label sits above the bars, in the chart's top padding.
          annotation: { clip: false, annotations },
        },
      },
    });
  }

  // Against concurrency (closed loop) or offered rate (open loop): throughput with its range, latency, and in an
  // open loop the share of requests that failed (shed, timed out): where each path saturates and what follows.
  function sweepCharts() {
    const axis = view.sweep_axis;
    if (!axis) return;
    const dashOf = (line) => DASHES[data.settings.n.indexOf(line.n) % DASHES.length];
    const common = (yTitle, unit) => ({
      interaction: { mode: 'nearest', axis: 'x', intersect: false },
      scales: { x: { title: axisTitle(axis.title) }, y: { type: 'linear', beginAtZero: true, title: axisTitle(yTitle) } },
      plugins: { legend: lineLegend, tooltip: withUnit(unit) },
    });
    const throughput = axis.lines.map((line) => ({
      label: line.label, borderColor: colourOf(line.path), backgroundColor: colourOf(line.path),
      borderDash: dashOf(line), data: line.rps, ranges: line.rps_ranges,
    }));
    if (axis.open_loop) {
      throughput.push({ label: 'offered (every request answered)', borderColor: '#adb5bd', backgroundColor: '#adb5bd',
        borderDash: [4, 4], borderWidth: 1.5, pointRadius: 0, data: axis.values });
    }
    draw('chart-sweep-throughput', { type: 'line', data: { labels: axis.values, datasets: throughput },
      options: common(axis.open_loop ? 'correct answers per second' : 'requests per second', ' req/s') });
    const latency = draw('chart-sweep-latency', {
      type: 'line',
      data: {
        labels: axis.values,
        datasets: axis.lines.flatMap((line) => axis.latency_keys.map((key, index) => ({
          label: line.label + ' ' + key, borderColor: colourOf(line.path), backgroundColor: colourOf(line.path),
          borderDash: index ? [6, 4] : [], borderWidth: index ? 1.5 : 2.5, data: line.latency[key],
        }))),
      },
      options: common('time per request (ms)', ' ms'),
    });
    scaleToggle('toggle-sweep-scale', latency, 'logarithmic');
    if (!axis.open_loop) return;
    draw('chart-sweep-errors', {
      type: 'line',
      data: { labels: axis.values, datasets: axis.lines.map((line) => ({
        label: line.label, borderColor: colourOf(line.path), backgroundColor: colourOf(line.path),
        borderDash: dashOf(line), data: line.error_percent,
      })) },
      options: common('% of requests sent', ' %'),
    });
  }

  // Per payload shape: each path's bytes per call, request (pale) stacked under response, and its services' CPU per
  // call, grouped by shape so that JSON's and protobuf's costs stand side by side.
  function payloadCharts() {
    const section = view.payload;
    if (!section) return;
    draw('chart-payload-bytes', {
      type: 'bar',
      data: {
        labels: section.categories,
        datasets: section.paths.flatMap((line) => [
          { label: line.path + ' request', stack: line.path, backgroundColor: colourOf(line.path) + '80', data: line.request },
          { label: line.path + ' response', stack: line.path, backgroundColor: colourOf(line.path), data: line.response },
        ]),
      },
      options: {
        scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, title: axisTitle('bytes per call (TCP payload)') } },
        plugins: { tooltip: withUnit(' B') },
      },
    });
    draw('chart-payload-cpu', {
      type: 'bar',
      data: {
        labels: section.categories,
        datasets: section.paths.map((line) => ({ label: line.path, backgroundColor: colourOf(line.path), data: line.cpu_us_per_call })),
      },
      options: {
        scales: { y: { beginAtZero: true, title: axisTitle('service CPU µs per call') } },
        plugins: { tooltip: withUnit(' µs') },
      },
    });
  }

  // Against the network: per path, req/s and p50 on each network of NETWORK, in its order.
  function networkCharts() {
    const section = view.network;
    if (!section) return;
    const lines = (read) => section.lines.map((line) => ({
      label: line.label, borderColor: colourOf(line.path), backgroundColor: colourOf(line.path),
      borderDash: DASHES[line.dash % DASHES.length], data: read(line),
    }));
    const options = (yTitle, unit) => ({
      interaction: { mode: 'nearest', axis: 'x', intersect: false },
      scales: { x: { title: axisTitle('network between the aggregator and the square services') },
        y: { type: 'linear', beginAtZero: true, title: axisTitle(yTitle) } },
      plugins: { legend: lineLegend, tooltip: withUnit(unit) },
    });
    draw('chart-network-throughput', { type: 'line', data: { labels: section.networks, datasets: lines((line) => line.rps) },
      options: options('requests per second', ' req/s') });
    const latency = draw('chart-network-latency', { type: 'line',
      data: { labels: section.networks, datasets: lines((line) => line.p50) },
      options: options('p50 time per request (ms)', ' ms') });
    scaleToggle('toggle-network-scale', latency, 'logarithmic');
  }

  // TLS against plaintext: each path's CPU per call in each TLS mode, on the same stack, side by side.
  function tlsChart() {
    const section = view.tls;
    if (!section) return;
    const shades = { off: '#9aa5b1', on: '#e8a33d', mtls: '#c0392b' };
    draw('chart-tls-cpu', {
      type: 'bar',
      data: {
        labels: section.paths,
        datasets: section.modes.map((mode) => ({ label: mode.label, backgroundColor: shades[mode.mode], data: mode.values })),
      },
      options: {
        scales: { y: { beginAtZero: true, title: axisTitle('service CPU µs per call') } },
        plugins: { tooltip: withUnit(' µs') },
      },
    });
  }

  paint();
  throughputChart();
  latencyCurveChart();
  cpuCharts();
  callTimeChart();
  floorChart();
  payloadCharts();
  networkCharts();
  tlsChart();
  sweepCharts();
  // Tells a headless browser (and the render test) that every chart was drawn.
  document.documentElement.setAttribute('data-charts-rendered', String(drawn));
}());
