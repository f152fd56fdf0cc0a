package lineagegovernance.icebergrest;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.rest.RESTCatalogAdapter;
import org.apache.iceberg.rest.RESTCatalogServlet;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.servlet.ServletContextHandler;
import org.eclipse.jetty.servlet.ServletHolder;

/**
 * An Apache Iceberg REST catalog bound to 127.0.0.1 only: Iceberg's own REST handlers (RESTCatalogAdapter,
 * RESTCatalogServlet) over a JdbcCatalog on a SQLite file, with a local file:// warehouse.
 *
 * <p>Usage: {@code LoopbackRestServer --folder DIR [--port N]}. Port 0 (the default) lets the system pick a free
 * port. The catalog lives in DIR/catalog.db, table files under DIR/warehouse; once the server accepts
 * connections its port is written to DIR/port (atomically) and printed as {@code listening on http://...}.
 *
 * <p>{@code CATALOG_*} environment variables add or override catalog properties, as in Iceberg's REST fixture
 * image: {@code __} becomes {@code -}, {@code _} becomes {@code .}, lower-cased (CATALOG_JDBC_USER → jdbc.user).
 */
public final class LoopbackRestServer {
  static final String HOST = "127.0.0.1";
  private static final String ENV_PREFIX = "CATALOG_";

  private LoopbackRestServer() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> options = options(args);
    Path folder = Path.of(required(options, "folder")).toAbsolutePath().normalize();
    int port = Integer.parseInt(options.getOrDefault("port", "0"));
    Files.createDirectories(folder.resolve("warehouse"));

    Catalog catalog = CatalogUtil.buildIcebergCatalog("loopback", catalogProperties(folder), new Configuration());
    RESTCatalogAdapter adapter = new RESTCatalogAdapter(catalog);

    Server server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost(HOST);
    connector.setPort(port);
    server.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler(ServletContextHandler.NO_SESSIONS);
    context.addServlet(new ServletHolder(new RESTCatalogServlet(adapter)), "/*");
    server.setHandler(context);
    server.setStopAtShutdown(true);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> closeQuietly(adapter)));
    server.start();

    int bound = connector.getLocalPort();
    writeAtomically(folder.resolve("port"), bound + "\n");
    System.out.println("listening on http://" + HOST + ":" + bound + " warehouse " + folder.resolve("warehouse"));
    System.out.flush();
    server.join();
  }

  /** Returns the catalog properties: a JdbcCatalog on DIR/catalog.db, warehouse DIR/warehouse, then CATALOG_*. */
  static Map<String, String> catalogProperties(Path folder) {
    Map<String, String> properties = new HashMap<>();
    properties.put(CatalogProperties.CATALOG_IMPL, JdbcCatalog.class.getName());
    properties.put(CatalogProperties.URI, "jdbc:sqlite:" + folder.resolve("catalog.db"));
    // Not Path.toUri(): its percent-encoding (a space as %20) is taken literally by pyiceberg and by Hadoop, which
    // then write under a folder named ".../a%20b/...". An unencoded file:// URI is what pyiceberg's own SQL
    // catalog uses too.
    properties.put(CatalogProperties.WAREHOUSE_LOCATION, "file://" + folder.resolve("warehouse"));
    properties.put("jdbc.schema-version", "V1");
    properties.put("jdbc.strict-mode", "true");
    System.getenv().forEach((key, value) -> {
      if (key.startsWith(ENV_PREFIX)) {
        properties.put(propertyName(key.substring(ENV_PREFIX.length())), value);
      }
    });
    return properties;
  }

  /** Returns the catalog property an environment variable's name (without CATALOG_) stands for. */
  static String propertyName(String variable) {
    return variable.replace("__", "-").replace('_', '.').toLowerCase(Locale.ROOT);
  }

  private static Map<String, String> options(String[] args) {
    Map<String, String> options = new HashMap<>();
    for (int i = 0; i < args.length; i += 2) {
      if (!args[i].startsWith("--") || i + 1 >= args.length) {
        throw new IllegalArgumentException("Usage: LoopbackRestServer --folder DIR [--port N]");
      }
      options.put(args[i].substring(2), args[i + 1]);
    }
    return options;
  }

  private static String required(Map<String, String> options, String name) {
    String value = options.get(name);
    if (value == null) {
      throw new IllegalArgumentException("Usage: LoopbackRestServer --folder DIR [--port N] (--" + name + " is missing)");
    }
    return value;
  }

  private static void writeAtomically(Path target, String text) throws IOException {
    Path partial = target.resolveSibling(target.getFileName() + ".partial");
    Files.writeString(partial, text, StandardCharsets.UTF_8);
    Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  private static void closeQuietly(AutoCloseable closeable) {
    try {
      closeable.close();
    } catch (Exception ignored) {
      // the process is exiting; nothing is left to release
    }
  }
}
