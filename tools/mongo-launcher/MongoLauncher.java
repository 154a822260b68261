import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CountDownLatch;

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
    MongoBackend backend = h2File == null ? new MemoryBackend() : new H2Backend(h2File);
    backend.version(REPORTED_VERSION);
    MongoServer server = new MongoServer(backend);
    server.bind(host, port);
    InetSocketAddress bound = server.getLocalAddress();
    System.out.println("LISTENING " + bound.getHostString() + ":" + bound.getPort());
    System.out.flush();

    CountDownLatch stop = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      server.shutdown();
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
}
