package lineagegovernance.icebergrest;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.rest.RESTCatalogAdapter;
import org.apache.iceberg.rest.RESTCatalogServlet;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.HandlerWrapper;
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
 *
 * <p>{@code ICEBERG_REST_TOKEN} makes it a catalog that wants credentials: every request must carry
 * {@code Authorization: Bearer TOKEN} (401 otherwise). With {@code ICEBERG_REST_CREDENTIAL=CLIENT_ID:SECRET} too,
 * {@code POST /v1/oauth/tokens} vends TOKEN for that client credential (OAuth2 client_credentials) and refuses
 * any other.
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
    String token = System.getenv("ICEBERG_REST_TOKEN");
    if (token != null && !token.isEmpty()) {
      BearerTokenGuard guard = new BearerTokenGuard(token, System.getenv("ICEBERG_REST_CREDENTIAL"));
      guard.setHandler(context);
      server.setHandler(guard);
    } else {
      server.setHandler(context);
    }
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

  /** Answers 401 to a request without the bearer token; vends the token for the client credential, if set. */
  static final class BearerTokenGuard extends HandlerWrapper {
    private final String token;
    private final String credential;

    BearerTokenGuard(String token, String credential) {
      this.token = token;
      this.credential = credential == null || credential.isEmpty() ? null : credential;
    }

    @Override
    public void handle(String target, Request base, HttpServletRequest request, HttpServletResponse response)
        throws IOException, ServletException {
      if (credential != null && "POST".equals(request.getMethod()) && target.endsWith("/v1/oauth/tokens")) {
        base.setHandled(true);
        String offered = request.getParameter("client_id") + ":" + request.getParameter("client_secret");
        if (credential.equals(offered)) {
          answer(response, 200, "{\"access_token\": \"" + token + "\", \"token_type\": \"bearer\", "
              + "\"issued_token_type\": \"urn:ietf:params:oauth:token-type:access_token\"}");
        } else {
          answer(response, 401, "{\"error\": \"invalid_client\", "
              + "\"error_description\": \"The client credential is not valid.\"}");
        }
        return;
      }
      if (!("Bearer " + token).equals(request.getHeader("Authorization"))) {
        base.setHandled(true);
        answer(response, 401, "{\"error\": {\"message\": \"A valid bearer token is required.\", "
            + "\"type\": \"NotAuthorizedException\", \"code\": 401}}");
        return;
      }
      super.handle(target, base, request, response);
    }

    private static void answer(HttpServletResponse response, int status, String json) throws IOException {
      response.setStatus(status);
      response.setContentType("application/json");
      response.getWriter().write(json);
    }
  }
}
