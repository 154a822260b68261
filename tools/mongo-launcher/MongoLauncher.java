import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.AbstractUniqueIndex;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.DefaultQueryMatcher;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.backend.ValueComparator;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.h2.H2Collection;
import de.bwaldvogel.mongo.backend.h2.H2Database;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;
import de.bwaldvogel.mongo.bson.BsonRegularExpression;
import de.bwaldvogel.mongo.bson.Document;
import io.netty.channel.Channel;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;
import org.h2.mvstore.type.DataType;

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
    MongoBackend backend = h2File == null ? new PlannedMemoryBackend() : DurableH2Backend.open(h2File);
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
   * Index planning. The library serves a query from a unique index only when the query names
   * exactly the index's keys, so `{messageId: {$in: [...]}, status: "accepted"}` or
   * `{_id: key, incident: name}` scanned the whole collection, holding its lock (every insert
   * into it waited). Here a unique index also serves a query that pins each of its keys (a value,
   * or `$in` of values) beside other conditions: its positions hold every possible match, and the
   * whole query is still applied to each document found there. Anything else takes the library's
   * own path.
   */
  static final class Planner {
    /** A unique index to serve a query from, and the part of the query it looks up. */
    record Plan<P>(Index<P> index, Document pinned) {}

    /**
     * Serves `query` from the unique index it pins (`fromPositions`: the collection's
     * matchDocuments over that index's positions), or, sorted, from the {@link OrderedIndex}
     * pinned furthest that can walk it (`sortedTail`: the library's skip, limit, projection and
     * cursor over the documents found, in order), or by the library's own planning.
     */
    static <P> QueryResult serve(List<Index<P>> indexes, Document query, Document orderBy, int skip, int limit,
        Predicate<Document> matches,
        Function<Iterable<P>, QueryResult> fromPositions, Function<Stream<Document>, QueryResult> sortedTail,
        Supplier<QueryResult> library) {
      Plan<P> plan = plan(indexes, query);
      if (plan != null) return fromPositions.apply(plan.index().getPositions(plan.pinned()));
      OrderedIndex<P> best = null;
      int bestPins = -1;
      for (Index<P> index : indexes) {
        if (!(index instanceof OrderedIndex<P> ordered)) continue;
        int pins = ordered.pins(query, orderBy, limit > 0);
        if (pins > bestPins) {
          best = ordered;
          bestPins = pins;
        }
      }
      if (best == null) return library.get();
      long needed = limit > 0 ? (long) Math.max(skip, 0) + limit : Long.MAX_VALUE;
      return sortedTail.apply(best.walk(query, orderBy, bestPins, needed, matches).stream());
    }

    /** How to serve `query` beyond the library's planning, or null to leave it to the library. */
    private static <P> Plan<P> plan(List<Index<P>> indexes, Document query) {
      for (Index<P> index : indexes) {
        if (index.canHandle(query)) return null; // the library plans it
        Document pinned = pinnedBy(index, query);
        if (pinned != null && index.canHandle(pinned)) return new Plan<>(index, pinned);
      }
      return null;
    }

    /** The part of `query` that pins every key of `index`, or null when it does not. */
    private static Document pinnedBy(Index<?> index, Document query) {
      if (!(index instanceof AbstractUniqueIndex<?>)) return null; // an OrderedIndex walks, not looks up
      Document pinned = new Document();
      for (IndexKey key : index.getKeys()) {
        Object value = query.get(key.getKey());
        if (!isPin(value)) return null;
        pinned.put(key.getKey(), value);
      }
      return pinned.size() < query.size() ? pinned : null; // all of it: the library's own path
    }

    /** A plain value, or `{$in: [plain values]}`; not null, arrays, documents or patterns. */
    private static boolean isPin(Object value) {
      if (value instanceof Document document) {
        return document.size() == 1
            && document.get("$in") instanceof Collection<?> values
            && values.stream().allMatch(Planner::isPlain);
      }
      return isPlain(value);
    }

    /** A value an index can look up: not null, an array, a document, a pattern or an operator. */
    static boolean isPlain(Object value) {
      return value != null
          && !(value instanceof Collection<?>)
          && !(value instanceof Document)
          && !BsonRegularExpression.isRegularExpression(value);
    }
  }

  /**
   * Cheaper execution of what the library runs slowly on a list's hot path, with the library's
   * answers: at 10k documents a sorted page sorted every match (about 130k comparisons) and
   * every filter went through the general matcher, all under the collection's lock.
   */
  static final class Executor {
    /**
     * Whether `document` matches `query` when that is plain string equality on top-level fields
     * (`{severity: "high", namespace: "shop"}`) and the document's values are strings or absent;
     * null (ask the library) for anything else: operators, dotted paths, arrays, other types.
     */
    static Boolean matchesPlainly(Document document, Document query) {
      for (String key : query.keySet()) {
        if (key.startsWith("$") || key.indexOf('.') >= 0 || !(query.get(key) instanceof String)) return null;
      }
      boolean all = true;
      for (String key : query.keySet()) {
        Object value = document.get(key);
        if (value instanceof String actual) {
          all &= actual.equals(query.get(key));
        } else if (value == null) {
          all = false; // absent or null never equals a string
        } else {
          return null;
        }
      }
      return all;
    }

    /**
     * The first `count` matches in `orderBy`'s order, in order. The library's comparator reads
     * each sort key through a regex split of its path on every comparison (a microsecond or
     * more each, about 130k of them for 10k documents); here each match's sort values are read
     * once, then sorted (stable, like the library's sort, and linear on the common case of a
     * collection stored in time order and listed newest first). Same values, same comparisons.
     */
    static List<Document> first(Stream<Document> documents, Predicate<Document> matches, Document orderBy, int count) {
      String[] keys = orderBy.keySet().toArray(String[]::new);
      Comparator<Object>[] directions = directions(orderBy, keys);
      record Keyed(Document document, Object[] values) {}
      List<Keyed> keyed = new ArrayList<>();
      documents.filter(matches).forEachOrdered(document -> {
        Object[] values = new Object[keys.length];
        for (int i = 0; i < keys.length; i++) values[i] = sortValue(document, keys[i]);
        keyed.add(new Keyed(document, values));
      });
      keyed.sort((a, b) -> {
        for (int i = 0; i < keys.length; i++) {
          int cmp = directions[i].compare(a.values()[i], b.values()[i]);
          if (cmp != 0) return cmp;
        }
        return 0;
      });
      return keyed.subList(0, Math.min(count, keyed.size())).stream().map(Keyed::document).toList();
    }

    /** The library's sort value (Utils.getSubdocumentValueCollectionAware), without the regex for a top-level key. */
    private static Object sortValue(Document document, String key) {
      return key.indexOf('.') < 0 && !key.equals("$")
          ? document.getOrMissing(key)
          : Utils.getSubdocumentValueCollectionAware(document, key);
    }

    /** Each sort key's comparator, as the library's DocumentComparator picks it. */
    @SuppressWarnings("unchecked")
    private static Comparator<Object>[] directions(Document orderBy, String[] keys) {
      Comparator<Object>[] directions = new Comparator[keys.length];
      for (int i = 0; i < keys.length; i++)
        directions[i] = ((Number) orderBy.get(keys[i])).intValue() > 0 ? ValueComparator.asc() : ValueComparator.desc();
      return directions;
    }

    /**
     * A sorted page (`limit` > 0) from its first skip + limit matches, pre-sorted, handed to the
     * library's tail (skip, limit, projection, cursor) with nothing left to sort; anything else
     * (no sort, `$natural`, no limit) to the library as it is.
     */
    static QueryResult page(Stream<Document> documents, Document orderBy, int skip, int limit,
        Predicate<Document> matches, Function<Stream<Document>, QueryResult> sortedTail,
        Supplier<QueryResult> library) {
      long count = (long) Math.max(skip, 0) + limit;
      if (orderBy == null || orderBy.isEmpty() || orderBy.containsKey("$natural") || limit <= 0 || count > 100_000)
        return library.get();
      return sortedTail.apply(first(documents, matches, orderBy, (int) count).stream());
    }

    /**
     * The answer to the driver's `countDocuments` (an aggregate of `{$match}` then
     * `{$group: {_id: 1, n: {$sum: 1}}}`), with plain equality matched as above instead of
     * through the aggregation's general matcher; null for any other command.
     */
    static Document countDocuments(Function<String, MongoDatabase> databases, String databaseName, String command,
        Document request) {
      if (!command.equalsIgnoreCase("aggregate") || !(request.get("aggregate") instanceof String name)) return null;
      if (request.containsKey("collation") || request.containsKey("hint") || request.containsKey("explain")) return null;
      if (!(request.get("pipeline") instanceof List<?> pipeline) || pipeline.size() != 2) return null;
      if (!(pipeline.get(0) instanceof Document match) || match.size() != 1
          || !(match.get("$match") instanceof Document query)) return null;
      if (query.containsKey("query") || query.containsKey("$query")) return null; // read as a wrapper
      Document group = new Document("_id", 1).append("n", new Document("$sum", 1));
      if (!new Document("$group", group).equals(pipeline.get(1))) return null;
      MongoCollection<?> collection = databases.apply(databaseName).resolveCollection(name, false);
      DefaultQueryMatcher general = new DefaultQueryMatcher();
      Predicate<Document> matches = document -> {
        Boolean plain = matchesPlainly(document, query);
        return plain != null ? plain : general.matches(document, query);
      };
      long n = collection == null ? 0 : count(collection, query, matches);
      List<Document> batch = n == 0 ? List.of() : List.of(new Document("_id", 1).append("n", (int) n));
      Document cursor = new Document("id", 0L).append("ns", databaseName + "." + name)
          .append("firstBatch", batch);
      Document response = new Document("cursor", cursor);
      Utils.markOkay(response);
      return response;
    }

    /**
     * The matches of `query`: from the range of the {@link OrderedIndex} that narrows it furthest
     * (keys pinned, then a range on the next; {@link OrderedIndex#reach}), read and
     * matched under the collection's lock (the index is the collection's); with none, read as the
     * library's aggregation reads (every document under the lock, matched outside it, so a count
     * runs beside the page's find).
     */
    private static <P> long count(MongoCollection<P> collection, Document query, Predicate<Document> matches) {
      synchronized (collection) {
        OrderedIndex<P> best = null;
        int bestReach = 0;
        for (Index<P> index : collection.getIndexes()) {
          if (!(index instanceof OrderedIndex<P> ordered)) continue;
          int reach = ordered.reach(query);
          if (reach > bestReach) {
            best = ordered;
            bestReach = reach;
          }
        }
        if (best != null) return best.count(query, best.pins(query), matches);
      }
      long n = 0;
      for (Document document : collection.queryAll()) {
        if (matches.test(document)) n++;
      }
      return n;
    }
  }

  /** The memory backend, planning as {@link Planner} says. */
  static final class PlannedMemoryBackend extends MemoryBackend {
    @Override
    public Document handleCommand(Channel channel, String database, String command, Document query) {
      Document counted = Executor.countDocuments(this::resolveDatabase, database, command, query);
      return counted != null ? counted : super.handleCommand(channel, database, command, query);
    }

    @Override
    public MemoryDatabase openOrCreateDatabase(String databaseName) {
      return new MemoryDatabase(databaseName, getCursorRegistry()) {
        @Override
        protected Index<Integer> openOrCreateSecondaryIndex(String collectionName, String indexName,
            List<IndexKey> keys, boolean sparse) {
          // A sparse index leaves documents out, so it cannot order a page: the library's (none).
          return sparse ? super.openOrCreateSecondaryIndex(collectionName, indexName, keys, true)
              : new OrderedIndex<>(indexName, keys, Comparator.naturalOrder()); // positions: list slots
        }

        @Override
        protected MemoryCollection openOrCreateCollection(String collectionName, CollectionOptions options) {
          return new MemoryCollection(this, collectionName, options, cursorRegistry) {
            @Override
            public synchronized void addIndex(Index<Integer> index) {
              // Under the collection's lock: an index built beside an insert would miss its document.
              if (index instanceof OrderedIndex<Integer> ordered) ordered.attach(this::getDocument);
              super.addIndex(index);
            }

            @Override
            protected QueryResult queryDocuments(Document query, Document orderBy, int skip, int limit,
                int batchSize, Document fieldSelector) {
              return Planner.serve(getIndexes(), query, orderBy, skip, limit,
                  document -> documentMatchesQuery(document, query),
                  positions -> matchDocuments(query, positions, orderBy, skip, limit, batchSize, fieldSelector),
                  sorted -> super.matchDocumentsFromStream(sorted, query, null, skip, limit, batchSize, fieldSelector),
                  () -> super.queryDocuments(query, orderBy, skip, limit, batchSize, fieldSelector));
            }

            @Override
            protected boolean documentMatchesQuery(Document document, Document query) {
              Boolean plain = Executor.matchesPlainly(document, query);
              return plain != null ? plain : super.documentMatchesQuery(document, query);
            }

            @Override
            protected QueryResult matchDocumentsFromStream(Stream<Document> documents, Document query,
                Document orderBy, int skip, int limit, int batchSize, Document fieldSelector) {
              return Executor.page(documents, orderBy, skip, limit, document -> documentMatchesQuery(document, query),
                  sorted -> super.matchDocumentsFromStream(sorted, query, null, skip, limit, batchSize, fieldSelector),
                  () -> super.matchDocumentsFromStream(documents, query, orderBy, skip, limit, batchSize, fieldSelector));
            }
          };
        }
      };
    }
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
    /**
     * Old chunks are compacted a bite at a time, in place of H2's background thread: 256 KiB every
     * 500 ms, the same 0.5 MiB/s as 16 MiB every 30 s, without stalling every write for up to a
     * second under load (docs/decisions.md, "Reliability and repairs").
     */
    private static final long MAINTENANCE_EVERY_MS = 500;
    private static final int COMPACTION_BITE = 256 * 1024;

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

    /** The library's H2 database and collections, planning as {@link Planner} says. */
    @Override
    protected MongoDatabase openOrCreateDatabase(String databaseName) {
      // Called by H2Backend's constructor for the databases a file holds, before `store` is set.
      MVStore mvStore = getMvStore();
      return new H2Database(databaseName, mvStore, getCursorRegistry()) {
        @Override
        protected Index<Object> openOrCreateSecondaryIndex(String collectionName, String indexName,
            List<IndexKey> keys, boolean sparse) {
          if (sparse) return super.openOrCreateSecondaryIndex(collectionName, indexName, keys, true);
          // Positions are the data map's keys, in its key order: the collection's natural order.
          DataType<Object> natural = dataMap(mvStore, getDatabaseName(), collectionName).getKeyType();
          return new OrderedIndex<>(indexName, keys, natural);
        }

        @Override
        protected Index<Object> openOrCreateUniqueIndex(String collectionName, String indexName, List<IndexKey> keys,
            boolean sparse) {
          return new ValueKeyedIndex(mvStore, uniqueIndexMapName(collectionName, indexName), indexName, keys, sparse);
        }

        @Override
        protected void dropIndex(MongoCollection<Object> collection, String indexName) {
          super.dropIndex(collection, indexName); // removes the library's map, if one is left
          mvStore.removeMap(uniqueIndexMapName(collection.getCollectionName(), indexName) + ValueKeyedIndex.SUFFIX);
        }

        /** The library's name for a unique index's map (H2Database.mapNameForIndex). */
        private String uniqueIndexMapName(String collectionName, String indexName) {
          return getFullCollectionNamespace(collectionName) + "._index_" + indexName;
        }

        @Override
        protected MongoCollection<Object> openOrCreateCollection(String collectionName, CollectionOptions options) {
          // The library's map names (H2Database.openOrCreateCollection), so existing files open as before.
          return new H2Collection(this, collectionName, options, dataMap(mvStore, getDatabaseName(), collectionName),
              mvStore.openMap("meta." + getDatabaseName() + "." + collectionName), cursorRegistry) {
            @Override
            public synchronized void addIndex(Index<Object> index) {
              // Under the collection's lock: an index built beside an insert would miss its document.
              if (index instanceof OrderedIndex<Object> ordered) ordered.attach(this::getDocument);
              super.addIndex(index);
            }

            @Override
            protected QueryResult queryDocuments(Document query, Document orderBy, int skip, int limit,
                int batchSize, Document fieldSelector) {
              return Planner.serve(getIndexes(), query, orderBy, skip, limit,
                  document -> documentMatchesQuery(document, query),
                  positions -> matchDocuments(query, positions, orderBy, skip, limit, batchSize, fieldSelector),
                  sorted -> super.matchDocumentsFromStream(sorted, query, null, skip, limit, batchSize, fieldSelector),
                  () -> super.queryDocuments(query, orderBy, skip, limit, batchSize, fieldSelector));
            }

            @Override
            protected boolean documentMatchesQuery(Document document, Document query) {
              Boolean plain = Executor.matchesPlainly(document, query);
              return plain != null ? plain : super.documentMatchesQuery(document, query);
            }

            @Override
            protected QueryResult matchDocumentsFromStream(Stream<Document> documents, Document query,
                Document orderBy, int skip, int limit, int batchSize, Document fieldSelector) {
              return Executor.page(documents, orderBy, skip, limit, document -> documentMatchesQuery(document, query),
                  sorted -> super.matchDocumentsFromStream(sorted, query, null, skip, limit, batchSize, fieldSelector),
                  () -> super.matchDocumentsFromStream(documents, query, orderBy, skip, limit, batchSize, fieldSelector));
            }
          };
        }
      };
    }

    /**
     * A collection's documents, under the library's name (H2Database.openOrCreateCollection), so
     * existing files open as before; written by {@link BsonDataType}, read in either form.
     */
    private static MVMap<Object, Document> dataMap(MVStore mvStore, String database, String collection) {
      return mvStore.openMap("databases." + database + "." + collection,
          new MVMap.Builder<Object, Document>().keyType(BsonDataType.INSTANCE).valueType(BsonDataType.INSTANCE));
    }

    @Override
    public Document handleCommand(Channel channel, String database, String command, Document query) {
      if (!WRITES.contains(command.toLowerCase(Locale.ROOT))) {
        Document counted = Executor.countDocuments(this::resolveDatabase, database, command, query);
        return counted != null ? counted : super.handleCommand(channel, database, command, query);
      }
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
          // Rewriting pages changes no document, and MVStore lets it run beside writers; only
          // the commit that persists it needs them out (a consistent snapshot, as every commit).
          if (!store.compact(80, COMPACTION_BITE)) continue;
          synchronized (commitMonitor) {
            lock.writeLock().lock();
            try {
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
