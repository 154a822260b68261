import de.bwaldvogel.mongo.backend.AbstractUniqueIndex;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.backend.Missing;
import java.util.List;
import java.util.Map;
import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;

/**
 * A unique index in H2 whose keys are ordered and written by {@link BsonDataType}: the library's
 * H2UniqueIndex, but over a map we open with our key type. The map has its own name (the
 * library's plus {@link #SUFFIX}): an index the library kept is left behind, and this one starts
 * empty, which makes the library fill it from the collection's documents.
 */
final class ValueKeyedIndex extends AbstractUniqueIndex<Object> {
  static final String SUFFIX = "#by-value";

  private final MVMap<KeyValue, Object> map;

  ValueKeyedIndex(MVStore store, String libraryMapName, String name, List<IndexKey> keys, boolean sparse) {
    super(name, keys, sparse);
    // The library's map of this index (ordered by Java serialization) goes with the first
    // commit that also holds this one filled: both happen before the store answers anyone.
    if (store.hasMap(libraryMapName)) store.removeMap(libraryMapName);
    this.map = store.openMap(libraryMapName + SUFFIX, new MVMap.Builder<KeyValue, Object>()
        .keyType(BsonDataType.INSTANCE).valueType(BsonDataType.INSTANCE));
  }

  @Override
  protected Object removeDocument(KeyValue key) {
    return map.remove(key);
  }

  @Override
  protected boolean putKeyPosition(KeyValue key, Object position) {
    return map.putIfAbsent(key, Missing.ofNullable(position)) == null;
  }

  @Override
  protected Iterable<Map.Entry<KeyValue, Object>> getIterable() {
    return map.entrySet();
  }

  @Override
  protected Object getPosition(KeyValue key) {
    return map.get(key);
  }

  @Override
  public long getCount() {
    return map.sizeAsLong();
  }

  @Override
  public boolean isEmpty() {
    return map.isEmpty();
  }

  @Override
  public long getDataSize() {
    return getCount();
  }
}
