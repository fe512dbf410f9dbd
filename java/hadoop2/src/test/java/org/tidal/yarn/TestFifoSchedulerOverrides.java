package org.tidal.yarn;

import static org.junit.Assert.assertTrue;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoScheduler;
import org.junit.Test;

/**
 * Holds {@link TidalScheduler} to its promise that every {@link FifoScheduler} method carrying FIFO
 * state or policy is overridden: each method FifoScheduler declares that Hadoop can call (public,
 * protected or package-private, not static) is overridden by TidalScheduler or listed in {@link
 * #INHERITED} with why it carries none. A method that a new Hadoop version adds fails this test
 * until someone reviews it.
 */
public class TestFifoSchedulerOverrides {
  /** FifoScheduler 2.7.7's methods TidalScheduler inherits, reviewed, with why that is safe. */
  private static final Map<String, String> INHERITED = new TreeMap<String, String>();

  static {
    INHERITED.put(
        "setConf(Configuration)",
        "stores the configuration that getConf returns; nothing in FifoScheduler reads it");
    INHERITED.put("getConf()", "returns the configuration setConf stored");
    INHERITED.put(
        "getNumClusterNodes()",
        "counts AbstractYarnScheduler's node map, which ClusterNodes keeps for Tidal");
    INHERITED.put(
        "setRMContext(RMContext)",
        "stores the RM context in AbstractYarnScheduler's field, which Tidal's parts share");
    INHERITED.put(
        "recover(RMState)",
        "empty in FifoScheduler; Tidal restores its own state when the scheduler starts");
    INHERITED.put(
        "getRMContainer(ContainerId)",
        "finds the container in its attempt in AbstractYarnScheduler's application map, which"
            + " AppAttemptRegistry keeps");
  }

  @Test
  public void everyFifoMethodHadoopCanCallIsOverriddenOrReviewed() {
    List<String> unreviewed = new ArrayList<String>();
    List<String> stale = new ArrayList<String>();
    Set<String> declared = new HashSet<String>();
    for (Method method : FifoScheduler.class.getDeclaredMethods()) {
      int modifiers = method.getModifiers();
      // Bridge methods forward to the typed method, which is checked itself.
      if (Modifier.isStatic(modifiers)
          || Modifier.isPrivate(modifiers)
          || method.isSynthetic()
          || method.isBridge()) {
        continue;
      }
      String signature = signature(method);
      declared.add(signature);
      boolean overridden = overriddenByTidal(method);
      if (INHERITED.containsKey(signature)) {
        if (overridden) {
          stale.add(signature + " is overridden now");
        }
      } else if (!overridden) {
        unreviewed.add(signature);
      }
    }
    for (String signature : INHERITED.keySet()) {
      if (!declared.contains(signature)) {
        stale.add(signature + " is not a FifoScheduler method that Hadoop can call");
      }
    }
    assertTrue(
        "FifoScheduler methods that TidalScheduler neither overrides nor lists as carrying no FIFO"
            + " state: "
            + unreviewed,
        unreviewed.isEmpty());
    assertTrue("stale entries in the reviewed list: " + stale, stale.isEmpty());
  }

  private static boolean overriddenByTidal(Method method) {
    try {
      return !TidalScheduler.class
          .getDeclaredMethod(method.getName(), method.getParameterTypes())
          .isBridge();
    } catch (NoSuchMethodException e) {
      return false;
    }
  }

  /** {@code name(SimpleType, ...)}. */
  private static String signature(Method method) {
    StringBuilder out = new StringBuilder(method.getName()).append('(');
    Class<?>[] types = method.getParameterTypes();
    for (int i = 0; i < types.length; i++) {
      out.append(i == 0 ? "" : ", ").append(types[i].getSimpleName());
    }
    return out.append(')').toString();
  }
}
