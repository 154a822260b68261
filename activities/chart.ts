import { createCanvas, GlobalFonts } from '@napi-rs/canvas';
import { BasicPlatform, Chart, registerables, type ChartConfiguration, type ChartItem, type Plugin } from 'chart.js';
import path from 'path';
import { type Granularity, type MttrBucket } from '../domain/mttr';

/**
 * Server-side PNG charts for chat replies (DESIGN §10: "images out as PNG charts"). Chart.js
 * draws on a Skia canvas (@napi-rs/canvas, prebuilt binaries shipped as npm packages); the font
 * comes from an npm package too, so text renders the same on a fresh machine or a slim container
 * without system fonts.
 */

const WIDTH = 960;
const HEIGHT = 480;
const FONT = 'Foghorn DejaVu Sans';

let ready = false;
function setup(): void {
  if (ready) return;
  const dir = path.join(path.dirname(require.resolve('dejavu-fonts-ttf/package.json')), 'ttf');
  for (const file of ['DejaVuSans.ttf', 'DejaVuSans-Bold.ttf']) {
    if (!GlobalFonts.registerFromPath(path.join(dir, file), FONT)) throw new Error(`cannot load font ${file}`);
  }
  Chart.register(...registerables);
  Chart.defaults.font.family = FONT;
  Chart.defaults.color = '#333';
  ready = true;
}

/** Chart.js leaves the canvas transparent; chat clients show that as black or checkered. */
const whiteBackground: Plugin<'bar'> = {
  id: 'whiteBackground',
  beforeDraw(chart) {
    const { ctx } = chart;
    ctx.save();
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, chart.width, chart.height);
    ctx.restore();
  },
};

/** Short axis labels: `Mar 14`; hourly `09:00`, with the day at the first bucket and at midnight. */
function axisLabel(start: Date, granularity: Granularity, first: boolean): string {
  const day = start.toLocaleDateString('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });
  if (granularity !== 'hourly') return day;
  const time = start.toISOString().slice(11, 16);
  return first || time === '00:00' ? `${day} ${time}` : time;
}

/** Granularity from bucket spacing, for callers that only have the buckets. */
function inferGranularity(buckets: readonly MttrBucket[]): Granularity {
  const step = buckets[0] ? buckets[0].end.getTime() - buckets[0].start.getTime() : 0;
  return step <= 3_600_000 ? 'hourly' : step <= 86_400_000 ? 'daily' : 'weekly';
}

/**
 * A bar chart of MTTR (minutes) per bucket, oldest first. Buckets without a resolved incident
 * get no bar (not a zero one: zero would claim instant repair); when none has data the chart
 * says so instead of drawing an empty frame without explanation.
 */
export async function renderMttrChart(
  buckets: readonly MttrBucket[],
  opts: { title: string; granularity?: Granularity },
): Promise<Buffer> {
  setup();
  const granularity = opts.granularity ?? inferGranularity(buckets);
  const minutes = buckets.map((b) => (b.mttrMs === null ? null : Math.round((b.mttrMs / 60_000) * 10) / 10));
  const hasData = minutes.some((m) => m !== null);
  // Axis labels omit the year: the range under the axis carries it.
  const range =
    buckets.length > 0
      ? `: ${buckets[0]!.start.toISOString().slice(0, 10)} to ${buckets[buckets.length - 1]!.start.toISOString().slice(0, 10)}`
      : '';
  const unit = { hourly: 'hour', daily: 'day', weekly: 'week starting' }[granularity];

  const config: ChartConfiguration<'bar', (number | null)[], string> = {
    type: 'bar',
    data: {
      labels: buckets.map((b, i) => axisLabel(b.start, granularity, i === 0)),
      datasets: [
        {
          label: 'MTTR (minutes)',
          data: minutes,
          backgroundColor: '#3b82f6',
          borderColor: '#1d4ed8',
          borderWidth: 1,
          maxBarThickness: 48,
        },
      ],
    },
    options: {
      responsive: false,
      animation: false,
      devicePixelRatio: 1,
      layout: { padding: 16 },
      plugins: {
        title: { display: true, text: opts.title, font: { size: 18, weight: 'bold' } },
        subtitle: {
          display: true,
          text: hasData
            ? `Mean time to resolve per ${unit.split(' ')[0]} (UTC); gaps: nothing resolved`
            : 'No incident detected in this period has been resolved',
          font: { size: 13 },
          padding: { bottom: 12 },
        },
        legend: { display: false },
        tooltip: { enabled: false },
      },
      scales: {
        x: {
          title: { display: true, text: `Detected (${unit}, UTC)${range}`, font: { size: 13 } },
          ticks: { autoSkip: true, maxRotation: 45, minRotation: 0 },
          grid: { display: false },
        },
        y: {
          beginAtZero: true,
          title: { display: true, text: 'MTTR (minutes)', font: { size: 13 } },
          ...(hasData ? {} : { suggestedMax: 60 }),
        },
      },
    },
    plugins: [whiteBackground],
    platform: BasicPlatform,
  };

  const canvas = createCanvas(WIDTH, HEIGHT);
  // Chart.js draws synchronously when animation is off; the canvas stands in for a DOM one.
  const chart = new Chart(canvas as unknown as ChartItem, config);
  try {
    return await canvas.encode('png');
  } finally {
    chart.destroy();
  }
}
