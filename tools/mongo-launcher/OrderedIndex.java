import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.Utils;
import de.bwaldvogel.mongo.backend.ValueComparator;
import de.bwaldvogel.mongo.bson.Document;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * A declared non-unique index, kept in memory in key order. The library keeps no secondary index
 * (it scanned, and sorted, the whole collection for every page: 10k incidents per list). This one
 * serves a page whose filter pins a prefix of its keys to plain values and whose sort starts with
 * the rest of its keys, in the index's directions or all reversed, as MongoDB would: the pinned
 * range is walked in sort order (from where a range on the next key, `$gte`/`$lt` and the like,
 * begins to where it ends), every document is matched against the whole filter, and the walk
 * stops once `skip + limit` have matched (further sort keys order each run of equal keys). Counts
 * walk the same ranges.
 *
 * Same answers as the library's path: entries with equal keys are kept in the collection's natural
 * order, which is how the library's stable sort orders ties. While any document holds an array or
 * a document under one of the keys (MongoDB's multikey cases) the index is not used at all.
 * Rebuilt from the documents when a store is opened; about 100–200 bytes of heap per document.
 */
final class OrderedIndex<P> extends Index<P> {
  /** An indexed document's key values; a probe (`position` null) bounds a pinned range. */
  private record Entry<P>(Object[] values, P position, int bound) {}

  private final String[] keys;
  private final int[] directions;
  private final TreeSet<Entry<P>> entries;
  /** By `_id`: how a removed or updated document finds its entry. */
  private final Map<Object, Entry<P>> byId = new HashMap<>();
  /** Documents holding an array or a document under a key: kept out of the order. */
  private int irregular;
  /** The collection's documents by position, once the index is attached to it. */
  private Function<P, Document> documents = position -> null;

  OrderedIndex(String name, List<IndexKey> keys, Comparator<? super P> natural) {
    super(name, keys, false);
    this.keys = keys.stream().map(IndexKey::getKey).toArray(String[]::new);
    this.directions = keys.stream().mapToInt(k -> k.isAscending() ? 1 : -1).toArray();
    this.entries = new TreeSet<>((a, b) -> {
      int n = Math.min(a.values().length, b.values().length);
      for (int i = 0; i < n; i++) {
        int cmp = ValueComparator.asc().compare(a.values()[i], b.values()[i]) * directions[i];
        if (cmp != 0) return cmp;
      }
      if (a.position() == null) return a.bound();
      if (b.position() == null) return -b.bound();
      return natural.compare(a.position(), b.position());
    });
  }

  /** Reads the collection's documents through `documents` (its getDocument); before any use. */
  void attach(Function<P, Document> documents) {
    this.documents = documents;
  }

  /**
   * How many leading keys `query` pins when this index can serve it sorted by `orderBy`, or -1
   * when it cannot. Unpinned, only a page (`limited`) is worth a walk: a whole walk is a scan.
   */
  int pins(Document query, Document orderBy, boolean limited) {
    if (orderBy == null || orderBy.isEmpty()) return -1;
    int pinned = pins(query);
    if (pinned < 0 || (pinned == 0 && !limited && bounds(query, 0) == null)) return -1;
    return direction(orderBy, pinned) == null ? -1 : pinned;
  }

  /**
   * How far this index narrows a count of `query`: twice the keys it pins, plus one when it also
   * bounds the next key by a range; 0 when it narrows nothing, -1 while the index is unusable.
   */
  int reach(Document query) {
    int pinned = pins(query);
    if (pinned < 0) return -1;
    return 2 * pinned + (bounds(query, pinned) != null ? 1 : 0);
  }

  /** How many leading keys `query` pins to plain values, or -1 while the index is unusable. */
  int pins(Document query) {
    if (irregular > 0) return -1;
    int pinned = 0;
    while (pinned < keys.length && MongoLauncher.Planner.isPlain(query.get(keys[pinned]))) pinned++;
    return pinned;
  }

  /** How many documents match `query`, from the range of the `pinned` leading keys (and a range on the next). */
  long count(Document query, int pinned, Predicate<Document> matches) {
    long n = 0;
    for (Entry<P> entry : range(query, pinned)) {
      Document document = documents.apply(entry.position());
      if (document != null && matches.test(document)) n++;
    }
    return n;
  }

  /**
   * The first `needed` documents matching in `orderBy`'s order (whole tie groups, so possibly a
   * few more), walking the range of the `pinned` leading keys (as {@link #pins} said). Sort keys
   * beyond the index's order each tie group, as the library's sort would.
   */
  List<Document> walk(Document query, Document orderBy, int pinned, long needed, Predicate<Document> matches) {
    boolean forward = direction(orderBy, pinned);
    Document rest = new Document();
    orderBy.entrySet().stream().skip(keys.length - pinned).forEach(e -> rest.put(e.getKey(), e.getValue()));
    NavigableSet<Entry<P>> range = forward ? range(query, pinned) : range(query, pinned).descendingSet();

    List<Document> found = new ArrayList<>();
    List<Entry<P>> ties = new ArrayList<>();
    for (Entry<P> entry : range) {
      if (!ties.isEmpty() && !tied(ties.get(0), entry, pinned)) {
        if (take(ties, forward, rest, matches, found) >= needed) return found;
      }
      ties.add(entry);
    }
    take(ties, forward, rest, matches, found);
    return found;
  }

  /**
   * The entries whose `pinned` leading keys equal the query's values for them (all of them for
   * none), within the range the query sets on the next key, if any: a window of incidents is
   * walked from its start, not from the first incident ever. A superset of the matches (bounds
   * taken inclusively, across types in the comparator's order), as each document found is matched
   * against the whole query.
   */
  private NavigableSet<Entry<P>> range(Document query, int pinned) {
    Object[] prefix = new Object[pinned];
    for (int i = 0; i < pinned; i++) prefix[i] = query.get(keys[i]);
    Entry<P> from = pinned == 0 ? null : new Entry<>(prefix, null, -1);
    Entry<P> to = pinned == 0 ? null : new Entry<>(prefix, null, 1);
    Object[] bounds = bounds(query, pinned);
    if (bounds != null) {
      Object low = bounds[0];
      Object high = bounds[1];
      if (low != null && high != null && ValueComparator.asc().compare(low, high) > 0) return Collections.emptyNavigableSet();
      // A descending key holds its highest values first.
      Object first = directions[pinned] > 0 ? low : high;
      Object last = directions[pinned] > 0 ? high : low;
      if (first != null) from = new Entry<>(extended(prefix, first), null, -1);
      if (last != null) to = new Entry<>(extended(prefix, last), null, 1);
    }
    if (from == null && to == null) return entries;
    if (from == null) return entries.headSet(to, true);
    if (to == null) return entries.tailSet(from, true);
    return entries.subSet(from, true, to, true);
  }

  /**
   * The lowest and highest value (either null for none) that `$gt`, `$gte`, `$lt` and `$lte` with
   * plain values allow under key `i`; null when the query sets no such bound there.
   */
  private Object[] bounds(Document query, int i) {
    if (i >= keys.length || !(query.get(keys[i]) instanceof Document condition)) return null;
    Object low = null;
    Object high = null;
    for (Map.Entry<String, Object> operator : condition.entrySet()) {
      Object value = operator.getValue();
      if (!MongoLauncher.Planner.isPlain(value)) continue;
      switch (operator.getKey()) {
        case "$gt", "$gte" -> low = low == null || ValueComparator.asc().compare(value, low) > 0 ? value : low;
        case "$lt", "$lte" -> high = high == null || ValueComparator.asc().compare(value, high) < 0 ? value : high;
        default -> { }
      }
    }
    return low == null && high == null ? null : new Object[] {low, high};
  }

  private static Object[] extended(Object[] prefix, Object value) {
    Object[] values = java.util.Arrays.copyOf(prefix, prefix.length + 1);
    values[prefix.length] = value;
    return values;
  }

  /**
   * Whether `orderBy` starts with the keys after the pinned ones: true in the index's order (or
   * when every key is pinned), false all reversed, null neither.
   */
  private Boolean direction(Document orderBy, int pinned) {
    if (orderBy.size() < keys.length - pinned) return null;
    boolean forward = true;
    int i = pinned;
    for (Map.Entry<String, Object> sort : orderBy.entrySet()) {
      if (i == keys.length) break;
      if (!sort.getKey().equals(keys[i]) || !(sort.getValue() instanceof Number n)) return null;
      boolean same = (n.intValue() > 0 ? 1 : -1) == directions[i]; // as the library's comparator reads it
      if (i > pinned && forward != same) return null;
      forward = same;
      i++;
    }
    return forward;
  }

  /**
   * A tie group's matches, in natural order (a reversed walk meets them backwards) or sorted by
   * `rest` (stably, as the library does); the total found.
   */
  private int take(List<Entry<P>> ties, boolean forward, Document rest, Predicate<Document> matches,
      List<Document> found) {
    List<Document> group = new ArrayList<>(ties.size());
    for (int i = 0; i < ties.size(); i++) {
      Document document = documents.apply(ties.get(forward ? i : ties.size() - 1 - i).position());
      if (document != null) group.add(document);
    }
    ties.clear();
    if (rest.isEmpty()) group.stream().filter(matches).forEach(found::add);
    else found.addAll(MongoLauncher.Executor.first(group.stream(), matches, rest, Integer.MAX_VALUE));
    return found.size();
  }

  private static boolean tied(Entry<?> a, Entry<?> b, int from) {
    for (int i = from; i < a.values().length; i++) {
      if (ValueComparator.asc().compare(a.values()[i], b.values()[i]) != 0) return false;
    }
    return true;
  }

  /** The document's values under the keys, as the library's sort reads them. */
  private Object[] valuesOf(Document document) {
    Object[] values = new Object[keys.length];
    for (int i = 0; i < keys.length; i++) {
      values[i] = keys[i].indexOf('.') < 0 ? document.getOrMissing(keys[i])
          : Utils.getSubdocumentValueCollectionAware(document, keys[i]);
    }
    return values;
  }

  private static boolean regular(Object[] values) {
    for (Object value : values) {
      if (value instanceof Collection<?> || value instanceof Document) return false;
    }
    return true;
  }

  @Override
  public void add(Document document, P position, MongoCollection<P> collection) {
    Entry<P> entry = new Entry<>(valuesOf(document), position, 0);
    byId.put(document.get("_id"), entry);
    if (regular(entry.values())) entries.add(entry);
    else irregular++;
  }

  @Override
  public P remove(Document document) {
    Entry<P> entry = byId.remove(document.get("_id"));
    if (entry == null) return null;
    if (regular(entry.values())) entries.remove(entry);
    else irregular--;
    return entry.position();
  }

  @Override
  public void updateInPlace(Document oldDocument, Document newDocument, P position, MongoCollection<P> collection) {
    remove(oldDocument);
    add(newDocument, position, collection);
  }

  @Override
  public P getPosition(Document document) {
    Entry<P> entry = byId.get(document.get("_id"));
    return entry == null ? null : entry.position();
  }

  @Override
  public void drop() {
    entries.clear();
    byId.clear();
    irregular = 0;
  }

  @Override public long getCount() { return byId.size(); }
  @Override public long getDataSize() { return 0; }
  @Override public boolean canHandle(Document query) { return false; } // equality lookups stay the library's
  @Override public Iterable<P> getPositions(Document query) { throw new UnsupportedOperationException(); }
  @Override public void checkAdd(Document document, MongoCollection<P> collection) {}
  @Override public void checkUpdate(Document oldDocument, Document newDocument, MongoCollection<P> collection) {}
}
