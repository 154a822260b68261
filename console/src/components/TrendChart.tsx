import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from 'chart.js';
import { useEffect, useRef } from 'react';

// Only the parts this chart uses: a stacked bar chart with a legend and tooltips.
Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

/** Colours with at least 3:1 contrast on white (WCAG non-text contrast). */
const COLOURS: Record<string, string> = { critical: '#a4161a', high: '#c2410c', medium: '#8a6d00', low: '#1d4ed8' };

export interface TrendPoint {
  date: string;
  total: number;
  bySeverity: Record<string, number>;
}

/** Incidents per day (or week) by severity; the table below it carries the same numbers for screen readers. */
export function TrendChart({ points, label }: { points: TrendPoint[]; label: string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const chart = new Chart(canvas.current, {
      type: 'bar',
      data: {
        labels: points.map((p) => p.date.slice(0, 10)),
        datasets: Object.keys(COLOURS).map((s) => ({
          label: s,
          data: points.map((p) => p.bySeverity[s] ?? 0),
          backgroundColor: COLOURS[s],
        })),
      },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } },
      },
    });
    return () => chart.destroy();
  }, [points]);
  return (
    <div className="chart">
      <canvas ref={canvas} role="img" aria-label={label} />
    </div>
  );
}
