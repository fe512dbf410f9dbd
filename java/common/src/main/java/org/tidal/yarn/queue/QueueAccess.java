package org.tidal.yarn.queue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.authorize.AccessControlList;
import org.apache.hadoop.yarn.api.records.QueueACL;
import org.apache.hadoop.yarn.api.records.QueueUserACLInfo;
import org.apache.hadoop.yarn.security.AdminACLsManager;
import org.apache.hadoop.yarn.util.Records;
import org.tidal.yarn.bridge.TidalForbiddenException;
import org.tidal.yarn.config.TidalConfig;
import org.tidal.yarn.view.QueueStatus;

/**
 * Who may do what in which queue: the one place the scheduler (submission, {@code checkAccess}, the
 * users' queue ACL info) and the REST endpoint (queue registration and removal) ask.
 *
 * <p>The rules are FairScheduler's in Hadoop 2.7: a queue's {@code <aclSubmitApps>} and {@code
 * <aclAdministerApps>} (which the core stores and reports in its status) default to everyone for
 * the root and to nobody for every other queue, and a user has a right on a queue when the queue or
 * any of its ancestors grants it; administering a queue includes submitting to it. On top of that,
 * as YARN's authorizer does, the members of {@code yarn.admin.acl} (and the RM's own user) may do
 * everything, and with {@code yarn.acl.enable} off (the default) everyone may.
 */
public final class QueueAccess {
  private static final AccessControlList EVERYONE = new AccessControlList("*");
  private static final AccessControlList NOBODY = new AccessControlList(" ");

  /** {@code yarn.acl.enable} and {@code yarn.admin.acl}, read as the RM reads them. */
  private final AdminACLsManager admins;

  /** The ACLs each queue's definition gives, by full name; replaced whole when queues change. */
  private volatile Map<String, Map<QueueACL, AccessControlList>> configured =
      Collections.emptyMap();

  QueueAccess(Configuration conf) {
    admins = new AdminACLsManager(conf);
  }

  /** Takes the ACLs of the root and of every queue from a fresh core status. */
  void update(QueueStatus status) {
    Map<String, Map<QueueACL, AccessControlList>> next =
        new HashMap<String, Map<QueueACL, AccessControlList>>();
    next.put(TidalConfig.ROOT_QUEUE, lists(status.rootAcls));
    for (QueueStatus.Leaf leaf : status.queues) {
      next.put(leaf.name, lists(leaf.acls));
    }
    configured = next;
  }

  private static Map<QueueACL, AccessControlList> lists(QueueStatus.Acls acls) {
    Map<QueueACL, AccessControlList> lists =
        new EnumMap<QueueACL, AccessControlList>(QueueACL.class);
    if (acls.submitApps != null) {
      lists.put(QueueACL.SUBMIT_APPLICATIONS, new AccessControlList(acls.submitApps));
    }
    if (acls.administerApps != null) {
      lists.put(QueueACL.ADMINISTER_QUEUE, new AccessControlList(acls.administerApps));
    }
    return lists;
  }

  /** Whether {@code user} has {@code acl} on the queue named short or full. */
  public boolean hasAccess(UserGroupInformation user, QueueACL acl, String queueName) {
    if (!admins.areACLsEnabled() || admins.isAdmin(user)) {
      return true;
    }
    Map<String, Map<QueueACL, AccessControlList>> acls = configured;
    String queue = QueueManager.fullName(queueName);
    while (true) {
      if (allows(acls, queue, acl, user)
          || (acl == QueueACL.SUBMIT_APPLICATIONS
              && allows(acls, queue, QueueACL.ADMINISTER_QUEUE, user))) {
        return true;
      }
      int dot = queue.lastIndexOf('.');
      if (dot < 0) {
        return false;
      }
      queue = queue.substring(0, dot);
    }
  }

  private static boolean allows(
      Map<String, Map<QueueACL, AccessControlList>> acls,
      String queue,
      QueueACL acl,
      UserGroupInformation user) {
    Map<QueueACL, AccessControlList> given = acls.get(queue);
    AccessControlList list = given == null ? null : given.get(acl);
    if (list == null) {
      list = queue.equals(TidalConfig.ROOT_QUEUE) ? EVERYONE : NOBODY;
    }
    return list.isUserAllowed(user);
  }

  /**
   * Whether {@code user} administers the cluster (may remove any user's queue): a member of
   * yarn.admin.acl while YARN ACLs are on. With ACLs off nobody is, so a user's queue is only ever
   * removed by its owner; Hadoop's "ACLs off means everyone is an administrator" would make
   * ownership moot.
   */
  public boolean isAdministrator(String user) {
    return admins.areACLsEnabled() && admins.isAdmin(UserGroupInformation.createRemoteUser(user));
  }

  /**
   * Refuses {@code user} with a {@link TidalForbiddenException} naming user, right and queue when
   * the user lacks {@code acl} on the queue.
   */
  public void check(String user, QueueACL acl, String queueName) {
    if (!hasAccess(UserGroupInformation.createRemoteUser(user), acl, queueName)) {
      String what =
          acl == QueueACL.SUBMIT_APPLICATIONS
              ? "submit applications to queue "
              : "administer queue ";
      throw new TidalForbiddenException(
          "User " + user + " cannot " + what + QueueManager.fullName(queueName));
    }
  }

  /** The rights {@code user} has on a queue, as YARN's clients list them. */
  QueueUserACLInfo userAclInfo(String fullName, UserGroupInformation user) {
    List<QueueACL> rights = new ArrayList<QueueACL>();
    for (QueueACL acl : QueueACL.values()) {
      if (hasAccess(user, acl, fullName)) {
        rights.add(acl);
      }
    }
    QueueUserACLInfo info = Records.newRecord(QueueUserACLInfo.class);
    info.setQueueName(fullName);
    info.setUserAcls(rights);
    return info;
  }
}
