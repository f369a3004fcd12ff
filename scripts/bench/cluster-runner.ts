import { startBenchCluster, type BenchCluster } from './cluster-process.js';
import type { KafkaCompression } from '../../shared/adapters/page-sink/kafka-compression.js';
import { countTopic, type TopicCount } from './cluster-resources.js';
import { topicLogBytes } from './kafka-log-bytes.js';
import { toRunnerResult, type MeasureOptions } from './measure-runner.js';
import { round, skippedResult, type ClusterFigures, type RunnerResult } from './report.js';
import { clockTicksPerSecond, readProcStat } from './proc-stat.js';
import { runMeasured } from './run-measured.js';
import type { RunnerSpec } from './runners.js';
import { serviceCpuBetween, snapshotServiceCpu, type ServiceCpu } from './service-cpu.js';
import type { SiteProcess } from './site-process.js';
import { markSiteCpu } from './site-cpu.js';

export interface ClusterMeasureOptions extends MeasureOptions {
  ackConcurrency: number;
  clusterProfileDir: string | undefined;
  kafkaCompression: KafkaCompression;
}

/**
 * The distributed path on this machine: starts a cluster (one scheduler, one agent of
 * `spec.cluster.processes` crawler processes) on RabbitMQ, Kafka and MinIO, and measures
 * `ackcrawl crawl --cluster` from submit to completion. CPU and peak RSS cover the crawl CLI and
 * the whole cluster (their start-up CPU included, as the embedded run's is); the brokers' CPU over
 * the same window is reported on its own, as services CPU. Complete means: the CLI's summary and
 * the site's distinct pages both equal the site's pages, and the topic holds a record for every
 * page (distinct keys read back). The cluster, its queues, topic and data dir are removed after.
 */
export async function measureClusterRunner(
  spec: RunnerSpec & { cluster: { processes: number } },
  site: SiteProcess,
  o: ClusterMeasureOptions,
): Promise<RunnerResult> {
  const { processes } = spec.cluster;
  await site.resetStats();
  let cluster: BenchCluster | undefined;
  try {
    cluster = await startBenchCluster({
      processes,
      concurrency: o.ackConcurrency,
      profileDir: o.clusterProfileDir,
      kafkaCompression: o.kafkaCompression,
      verbose: o.verbose,
    });
    const before = snapshotServiceCpu();
    const siteCpu = markSiteCpu(site.pid);
    const run = await runMeasured({
      command: process.execPath,
      args: spec.prepare().args,
      env: cluster.env,
      alsoMonitor: cluster.pids,
      timeoutMs: o.timeoutMs,
      inheritStderr: o.verbose,
    });
    const services = serviceCpuBetween(before, snapshotServiceCpu());
    const siteCpuSeconds = siteCpu();
    const schedulerTicks = readProcStat(cluster.pids[0] as number)?.cpuTicks ?? 0;
    const served = await site.stats();
    const problems: string[] = [];
    const topic = await countTopic(cluster.topic, true).catch((err: unknown) => {
      problems.push(`could not read the topic back: ${err instanceof Error ? err.message : String(err)}`);
      return { records: 0, distinctKeys: null } satisfies TopicCount;
    });
    if (topic.distinctKeys !== null && topic.distinctKeys !== o.pages)
      problems.push(`topic holds ${topic.distinctKeys} distinct pages (${topic.records} records)`);
    if (services.missing.length > 0) problems.push(`services not running: ${services.missing.join(', ')}`);
    if (services.restarted.length > 0)
      problems.push(`restarted during the run, by someone else: ${services.restarted.join(', ')}`);
    const figures = {
      crawlerProcesses: processes,
      schedulerCpuSeconds: schedulerTicks / clockTicksPerSecond,
      kafkaCompression: o.kafkaCompression,
      kafkaLogBytes: topicLogBytes(cluster.topic),
    };
    return withCluster(
      { ...toRunnerResult(spec, run, served, o, problems), siteCpuSeconds },
      figures,
      services,
      topic,
    );
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const figures = {
      crawlerProcesses: processes,
      schedulerCpuSeconds: 0,
      kafkaCompression: o.kafkaCompression,
      kafkaLogBytes: null,
    };
    return withCluster(failedResult(spec, message), figures, undefined, undefined);
  } finally {
    await cluster?.stop();
  }
}

function withCluster(
  r: RunnerResult,
  figures: Pick<
    ClusterFigures,
    'crawlerProcesses' | 'schedulerCpuSeconds' | 'kafkaCompression' | 'kafkaLogBytes'
  >,
  services: ServiceCpu | undefined,
  topic: TopicCount | undefined,
): RunnerResult {
  return {
    ...r,
    cluster: {
      crawlerProcesses: figures.crawlerProcesses,
      schedulerCpuSeconds: round(figures.schedulerCpuSeconds, 2),
      servicesCpuSeconds: services?.totalSeconds ?? 0,
      servicesCpuByService: services?.byService ?? {},
      kafkaRecords: topic?.records ?? 0,
      kafkaDistinctKeys: topic?.distinctKeys ?? null,
      kafkaCompression: figures.kafkaCompression,
      kafkaLogBytes: figures.kafkaLogBytes,
    },
  };
}

function failedResult(spec: RunnerSpec, problem: string): RunnerResult {
  return { ...skippedResult(spec), status: 'failed', problem, keeps: spec.keeps };
}
