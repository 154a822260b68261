import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.bson.Document;
import io.netty.channel.Channel;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.h2.mvstore.MVStore;

/**
 * Serves the MongoDB wire protocol for Foghorn's embedded stack and tests.
 * Usage: MongoLauncher --host 127.0.0.1 --port 27017 [--h2 FILE]
 * Without --h2 the data lives in memory. Prints "LISTENING host:port" once bound (port 0 picks
 * a free port), and stops when stdin closes or on SIGTERM, so a dying parent never orphans it.
 */
public final class MongoLauncher {
  /**
   * The library's newest ServerVersion reports wire version 8, but the current Node.js driver
   * (mongodb 7, Mongoose 9) refuses anything below 9. Report 5.0 / wire 13; the commands Foghorn
   * uses are all implemented by the library (see docs/spike.md).
   */
  private static final MongoVersion REPORTED_VERSION = new MongoVersion() {
    @Override public List<Integer> getVersionArray() { return List.of(5, 0, 0); }
    @Override public int getWireVersion() { return 13; }
  };

  public static void main(String[] args) throws Exception {
    String host = "127.0.0.1";
    int port = 27017;
    String h2File = null;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--host" -> host = args[++i];
        case "--port" -> port = Integer.parseInt(args[++i]);
        case "--h2" -> h2File = args[++i];
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    MongoBackend backend = h2File == null ? new MemoryBackend() : DurableH2Backend.open(h2File);
    backend.version(REPORTED_VERSION);
    MongoServer server = new MongoServer(backend);
    server.bind(host, port);
    InetSocketAddress bound = server.getLocalAddress();
    System.out.println("LISTENING " + bound.getHostString() + ":" + bound.getPort());
    System.out.flush();

    CountDownLatch stop = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      server.shutdown(); // closes the backend: a final commit of the H2 store
      stop.countDown();
    }));
    Thread stdinWatch = new Thread(() -> {
      try {
        while (System.in.read() != -1) { /* drain */ }
      } catch (Exception ignored) {
        // stdin closed abnormally: treat like EOF
      }
      System.exit(0);
    });
    stdinWatch.setDaemon(true);
    stdinWatch.start();
    stop.await();
  }

  /**
   * The H2 backend, durable before acknowledged. The library's default store commits in the
   * background about once a second, so a kill -9 lost the writes of the last second, and a
   * background commit could even catch a write half-applied (an index entry without its
   * document). Here background commits are off; every write command is applied under a shared
   * lock, then committed and fsynced before its answer leaves. Commits take the lock exclusively,
   * so each one is a consistent snapshot between writes. Writers that finish while a commit runs
   * are covered by the next one (group commit): one fsync serves every writer waiting for it.
   */
  static final class DurableH2Backend extends H2Backend {
    /** Commands that change data or metadata (lower case); anything else is a read. */
    private static final Set<String> WRITES = Set.of(
        "insert", "update", "delete", "findandmodify", "create", "createindexes", "drop",
        "dropindexes", "dropdatabase", "renamecollection", "collmod");
    /** How often old chunks are compacted (the background thread did this before). */
    private static final long MAINTENANCE_EVERY_MS = 30_000;

    private final MVStore store;
    private final ReentrantReadWriteLock lock = new ReentrantReadWriteLock();
    private final AtomicLong applied = new AtomicLong();
    private final Object commitMonitor = new Object();
    private long durable; // guarded by commitMonitor: writes up to this count are on disk

    static DurableH2Backend open(String file) {
      MVStore store = new MVStore.Builder().fileName(file).autoCommitDisabled().open();
      return new DurableH2Backend(store);
    }

    private DurableH2Backend(MVStore store) {
      super(store);
      this.store = store;
      Thread maintenance = new Thread(this::maintain, "h2-maintenance");
      maintenance.setDaemon(true);
      maintenance.start();
    }

    @Override
    public Document handleCommand(Channel channel, String database, String command, Document query) {
      if (!WRITES.contains(command.toLowerCase(Locale.ROOT))) return super.handleCommand(channel, database, command, query);
      lock.readLock().lock();
      try {
        return super.handleCommand(channel, database, command, query);
      } finally {
        // Also when the command failed: a failed bulk write may have applied a part, and what
        // the client may already see must be on disk before it hears back.
        long ticket = applied.incrementAndGet();
        lock.readLock().unlock();
        awaitDurable(ticket);
      }
    }

    /** Returns once write number `ticket` is committed and synced. */
    private void awaitDurable(long ticket) {
      synchronized (commitMonitor) {
        if (durable >= ticket) return; // a commit that started after our write covered it
        long upTo;
        lock.writeLock().lock();
        try {
          upTo = applied.get();
          store.commit();
        } finally {
          lock.writeLock().unlock();
        }
        store.sync();
        durable = upTo;
      }
    }

    private void maintain() {
      for (;;) {
        try {
          Thread.sleep(MAINTENANCE_EVERY_MS);
          synchronized (commitMonitor) {
            lock.writeLock().lock();
            try {
              store.compact(80, 16 * 1024 * 1024);
              store.commit();
            } finally {
              lock.writeLock().unlock();
            }
            store.sync();
          }
        } catch (InterruptedException e) {
          return;
        } catch (RuntimeException e) {
          System.err.println("h2 maintenance failed: " + e);
        }
      }
    }
  }
}
