// Builds the MapStatus an RPMP map task reports, across Spark versions: MapStatus.apply
// takes (location, sizes, mapTaskId, checksumValue) on Spark 4.x and (location, sizes,
// mapTaskId) before, so the arity is chosen once by reflection. Any thread.
package org.apache.spark.shuffle.rpmp

import java.lang.reflect.Method

import org.apache.spark.scheduler.MapStatus
import org.apache.spark.storage.BlockManagerId

private[spark] object MapStatuses {
  private val companion: AnyRef = MapStatus

  private lazy val (applyMethod, takesChecksum): (Method, Boolean) = {
    val applies = companion.getClass.getMethods.filter(_.getName == "apply")
    def find(params: Class[_]*) = applies.find(_.getParameterTypes.toSeq == params)
    val base = Seq(classOf[BlockManagerId], classOf[Array[Long]], java.lang.Long.TYPE)
    find(base :+ java.lang.Long.TYPE: _*).map(m => (m, true))
      .orElse(find(base: _*).map(m => (m, false)))
      .getOrElse(throw new IllegalStateException(
        "this Spark's MapStatus.apply takes neither (location, sizes, mapId[, checksum])"))
  }

  /** True when this Spark's MapStatus carries a checksum value. */
  def carriesChecksum: Boolean = takesChecksum

  /** MapStatus.apply with the checksum when this Spark takes one (else it is dropped). */
  def apply(location: BlockManagerId, sizes: Array[Long], mapId: Long, checksum: Long)
      : MapStatus = {
    val args: Seq[AnyRef] = Seq(location, sizes, Long.box(mapId)) ++
      (if (takesChecksum) Seq(Long.box(checksum)) else Nil)
    applyMethod.invoke(companion, args: _*).asInstanceOf[MapStatus]
  }
}
