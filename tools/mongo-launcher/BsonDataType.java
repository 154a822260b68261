import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.backend.ValueComparator;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.bson.ObjectId;
import de.bwaldvogel.mongo.wire.bson.BsonDecoder;
import de.bwaldvogel.mongo.wire.bson.BsonEncoder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.h2.mvstore.DataUtils;
import org.h2.mvstore.WriteBuffer;
import org.h2.mvstore.type.BasicDataType;
import org.h2.mvstore.type.ObjectDataType;

/**
 * How the store keeps documents, their ids and unique-index keys in H2. The library leaves them
 * to H2's ObjectDataType, which writes an object it does not know with Java serialization, and
 * compares two such keys by serializing both: under load that was 40% of the store's CPU and most
 * of the 650 MB it allocated a second (docs/decisions.md, "Embedded servers"). Here documents and keys are
 * written as BSON and ObjectIds as their 12 bytes; keys are compared by value, in memory, and
 * anything else (documents' ids among them) as before, so existing maps keep their order.
 *
 * Values the library wrote before are still read: each value's first byte is a tag, and ours lie
 * above every tag ObjectDataType writes. Anything BSON cannot hold (none of ours so far) is
 * written the library's way. Keys compare in another order than before, so a unique index is
 * kept in a new map (see {@link MongoLauncher}), filled from its documents when first opened.
 */
final class BsonDataType extends BasicDataType<Object> {
  static final BsonDataType INSTANCE = new BsonDataType();

  /** ObjectDataType's tags end at 119 (its short byte arrays). */
  private static final byte TAG_DOCUMENT = (byte) 0xE0;
  private static final byte TAG_KEY = (byte) 0xE1;
  /** Documents' ids are the data maps' keys and the unique indexes' values. */
  private static final byte TAG_OBJECT_ID = (byte) 0xE2;
  private static final int OBJECT_ID_BYTES = 12;
  /** Arrays compare element by element: a key is a value, not a sort order over its elements. */
  private static final Comparator<Object> VALUES = ValueComparator.ascWithoutListHandling();

  /**
   * The library's type, for everything else: one per thread, since ObjectDataType remembers the
   * last type it saw in a field it reads twice without a lock (H2's default gives each map its
   * own, still shared by the threads using the map; this type is shared by every map).
   */
  private final ThreadLocal<ObjectDataType> legacy = ThreadLocal.withInitial(ObjectDataType::new);
  /** What a document takes in memory, estimated from what was written (H2 sizes pages by it). */
  private volatile int documentMemory = 1024;

  private BsonDataType() {}

  @Override
  public Object[] createStorage(int size) {
    return new Object[size];
  }

  @Override
  public int compare(Object a, Object b) {
    if (a instanceof KeyValue x && b instanceof KeyValue y) return compareKeys(x, y);
    return legacy.get().compare(a, b);
  }

  /** By value, field by field; values equal by value but not equal (1 and 1.0) still differ. */
  private int compareKeys(KeyValue a, KeyValue b) {
    int n = Math.min(a.size(), b.size());
    for (int i = 0; i < n; i++) {
      Object x = a.get(i);
      Object y = b.get(i);
      int c = VALUES.compare(x, y);
      if (c == 0 && !Objects.equals(x, y)) c = legacy.get().compare(x, y);
      if (c != 0) return c;
    }
    return Integer.compare(a.size(), b.size());
  }

  @Override
  public int getMemory(Object obj) {
    if (obj instanceof Document) return documentMemory;
    if (obj instanceof ObjectId) return 40;
    if (obj instanceof KeyValue key) {
      int memory = 48;
      for (Object value : key) memory += value instanceof String s ? 48 + 2 * s.length() : 32;
      return memory;
    }
    return legacy.get().getMemory(obj);
  }

  @Override
  public void write(WriteBuffer buff, Object obj) {
    if (obj instanceof ObjectId id) {
      buff.put(TAG_OBJECT_ID).put(id.toByteArray());
      return;
    }
    ByteBuf bson = encode(obj);
    if (bson == null) {
      legacy.get().write(buff, obj);
      return;
    }
    int length = bson.readableBytes();
    if (obj instanceof Document) documentMemory = (documentMemory * 15 + 2 * length + 64) / 16;
    buff.put(obj instanceof Document ? TAG_DOCUMENT : TAG_KEY).putVarInt(length)
        .put(bson.array(), bson.arrayOffset() + bson.readerIndex(), length);
  }

  @Override
  public Object read(ByteBuffer buff) {
    byte tag = buff.get(buff.position());
    if (tag != TAG_DOCUMENT && tag != TAG_KEY && tag != TAG_OBJECT_ID) return legacy.get().read(buff);
    buff.get();
    if (tag == TAG_OBJECT_ID) {
      byte[] id = new byte[OBJECT_ID_BYTES];
      buff.get(id);
      return new ObjectId(id);
    }
    int length = DataUtils.readVarInt(buff);
    ByteBuf bson = Unpooled.wrappedBuffer(buff.slice(buff.position(), length));
    buff.position(buff.position() + length);
    Document document = BsonDecoder.decodeBson(bson);
    return tag == TAG_DOCUMENT ? document : new KeyValue(new ArrayList<>(document.values()));
  }

  /**
   * The BSON of a document, or of a key as a document of its values under "0", "1", … (BSON keeps
   * their types), in this thread's scratch buffer (valid until its next use); null for anything
   * else, or when BSON cannot hold one of its values.
   */
  private static ByteBuf encode(Object obj) {
    ByteBuf buffer = scratch();
    try {
      if (obj instanceof Document document) writeDocument(document, buffer);
      else if (obj instanceof KeyValue key) writeIndexed(key, buffer);
      else return null;
      return buffer;
    } catch (RuntimeException e) {
      return null;
    }
  }

  /**
   * Each commit writes every page it changed whole, so a page's unchanged documents are encoded
   * again and again: one buffer per thread, reused, instead of one allocated (and grown) per
   * value; dropped when a large document grew it.
   */
  private static final ThreadLocal<ByteBuf> SCRATCH = new ThreadLocal<>();
  private static final int SCRATCH_BYTES = 4096;
  private static final int SCRATCH_KEPT_BYTES = 1 << 20;

  private static ByteBuf scratch() {
    ByteBuf buffer = SCRATCH.get();
    if (buffer == null || buffer.capacity() > SCRATCH_KEPT_BYTES) SCRATCH.set(buffer = Unpooled.buffer(SCRATCH_BYTES));
    return buffer.clear();
  }

  /*
   * The bytes BsonEncoder.encodeDocument writes, without the copies it makes of every name and
   * string (String.getBytes) or of an array (a Document of its indexes). Any other value is the
   * library's encodeValue.
   */
  private static void writeDocument(Map<String, ?> document, ByteBuf buffer) {
    int start = buffer.writerIndex();
    buffer.writeIntLE(0);
    for (Map.Entry<String, ?> entry : document.entrySet()) writeElement(entry.getKey(), entry.getValue(), buffer);
    finish(buffer, start);
  }

  private static void writeElement(String name, Object value, ByteBuf buffer) {
    byte type = BsonEncoder.determineType(value);
    buffer.writeByte(type);
    writeText(name, buffer);
    buffer.writeByte(0);
    switch (type) {
      case BSON_STRING -> {
        int at = buffer.writerIndex();
        buffer.writeIntLE(0);
        int bytes = writeText(value.toString(), buffer);
        buffer.writeByte(0);
        buffer.setIntLE(at, bytes + 1);
      }
      case BSON_DOCUMENT -> {
        @SuppressWarnings("unchecked")
        Map<String, ?> map = (Map<String, ?>) value;
        writeDocument(map, buffer);
      }
      case BSON_ARRAY -> {
        if (value instanceof List<?> list) writeIndexed(list, buffer);
        else BsonEncoder.encodeValue(type, value, buffer);
      }
      default -> BsonEncoder.encodeValue(type, value, buffer);
    }
  }

  /** Values as a document under "0", "1", …: a BSON array, or a unique-index key. */
  private static void writeIndexed(Iterable<?> values, ByteBuf buffer) {
    int start = buffer.writerIndex();
    buffer.writeIntLE(0);
    int i = 0;
    for (Object value : values) writeElement(Integer.toString(i++), value, buffer);
    finish(buffer, start);
  }

  /** Closes a document started at `start`: its terminator, then its length in front. */
  private static void finish(ByteBuf buffer, int start) {
    buffer.writeByte(0);
    buffer.setIntLE(start, buffer.writerIndex() - start);
  }

  /** A string's UTF-8 (as String.getBytes writes it, malformed text too); returns its length. */
  private static int writeText(String text, ByteBuf buffer) {
    for (int i = 0; i < text.length(); i++) {
      if (text.charAt(i) >= 0x80) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        buffer.writeBytes(bytes);
        return bytes.length;
      }
    }
    return buffer.writeCharSequence(text, StandardCharsets.US_ASCII);
  }

  private static final byte BSON_STRING = 2;
  private static final byte BSON_DOCUMENT = 3;
  private static final byte BSON_ARRAY = 4;
}
